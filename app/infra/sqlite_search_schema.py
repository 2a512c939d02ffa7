"""SQLite search tables, the analysis function and the triggers that fill them.

Temporary triggers on this process's write connection index every row the
statement that changed it wrote, inside that statement: the index commits with
the write or not at all. Rows written by any other connection (a seeding
script, an older process) are brought up to date before a prefix is searched.
"""

import json
import sqlite3
from collections.abc import Sequence

import aiosqlite

from app.features.search.domain.analysis import COUNT_BITS

from .sqlite_connection import install_triggers
from .sqlite_search_postings import (
    GRAM_MARK,
    PREFIX_INDEX,
    PREFIX_MARK,
    analyse_row,
    sql_analysis,
    term_rows,
)

__all__ = ["GRAM_MARK", "PREFIX_INDEX", "PREFIX_MARK"]

ANALYSER_VERSION = 7
"""Bump when folding, tokens or postings change: every row is then re-indexed
lazily."""
FUNCTION = "wenchang_search_analysis"

TABLES = """
CREATE TABLE IF NOT EXISTS search_documents (
    key TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    analyser INTEGER NOT NULL,
    len_name INTEGER NOT NULL,
    len_aliases INTEGER NOT NULL,
    len_description INTEGER NOT NULL,
    len_content INTEGER NOT NULL,
    runs_name TEXT NOT NULL,
    runs_aliases TEXT NOT NULL,
    runs_description TEXT NOT NULL,
    runs_content TEXT NOT NULL,
    terms TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_documents_lengths ON search_documents (
    key, len_name, len_aliases, len_description, len_content
);
CREATE TABLE IF NOT EXISTS search_terms (
    term TEXT NOT NULL,
    key TEXT NOT NULL,
    counts INTEGER NOT NULL,
    PRIMARY KEY (term, key)
) WITHOUT ROWID;
"""
SEARCH_TABLES = ("search_terms", "search_documents")


def _unpacked() -> tuple[str, ...]:
    columns: list[str] = []
    shift = 0
    for bits in COUNT_BITS:
        columns.append(f"((counts >> {shift}) & {(1 << bits) - 1})")
        shift += bits
    return tuple(columns)


UNPACKED = _unpacked()
"""SQL for each field's count in a ``search_terms`` row, in field order."""

# The document row lists its terms, so forgetting them is one primary-key
# lookup each and the postings need no second index by key.
_FORGET = """
    DELETE FROM search_terms WHERE key = {row}.key AND term IN (
        SELECT key FROM json_each((
            SELECT terms FROM search_documents WHERE key = {row}.key)));
    DELETE FROM search_documents WHERE key = {row}.key;
"""
# One call per statement: the analysis is a scalar subquery, cached by Python.
# It is given the terms the row is indexed under now, and names the postings
# to drop ('$.g') and to set ('$.s'): a write that changes a line rewrites
# the few postings it changed, not all of them. An update also gives the row
# it replaces and, if the index holds that very version, its document row:
# then only the lines the write changed are analysed. The document row goes
# last, so every statement sees the same previous terms.
_REPLACED = f"""OLD.data, OLD.description, OLD.aliases,
    (SELECT json_array(len_name, len_aliases, len_description, len_content,
        runs_name, runs_aliases, runs_description, runs_content)
     FROM search_documents
     WHERE key = NEW.key AND version = OLD.version AND analyser = {ANALYSER_VERSION})"""
_ANALYSIS = f"""(SELECT {FUNCTION}(NEW.key, NEW.data, NEW.description, NEW.aliases,
    (SELECT terms FROM search_documents WHERE key = NEW.key), {{replaced}}))"""
_INDEX = """
    INSERT INTO search_terms
    SELECT key, NEW.key, value FROM json_each({analysis}, '$.d') WHERE true
    ON CONFLICT (term, key) DO UPDATE SET counts = counts + excluded.counts;
    DELETE FROM search_terms WHERE key = NEW.key AND counts = 0 AND term IN (
        SELECT key FROM json_each({analysis}, '$.d'));
    INSERT OR REPLACE INTO search_documents
    SELECT NEW.key, NEW.version, {version},
        j ->> '$.l[0]', j ->> '$.l[1]', j ->> '$.l[2]', j ->> '$.l[3]',
        j ->> '$.r[0]', j ->> '$.r[1]', j ->> '$.r[2]', j ->> '$.r[3]',
        json_patch(
            coalesce((SELECT terms FROM search_documents WHERE key = NEW.key), '{{}}'),
            (SELECT json_group_object(e.key, (SELECT counts FROM search_terms
                WHERE term = e.key AND key = NEW.key))
             FROM json_each(j, '$.d') AS e))
    FROM (SELECT {analysis} AS j);
"""


def _index(replaced: str) -> str:
    analysis = _ANALYSIS.format(replaced=replaced)
    return _INDEX.format(analysis=analysis, version=ANALYSER_VERSION)


# A recorded delete first marks the row a tombstone (``sqlite_history``), then
# removes it: a tombstone is never indexed, only forgotten.
# A write that leaves every searched field as it was (a rewrite of the same
# body) only moves the document row to its version, in SQL alone; unless the
# index holds the row at neither version, whichever of the two update triggers
# SQLite fires first.
_SAME = (
    "NEW.data IS OLD.data AND NEW.description IS OLD.description "
    "AND NEW.aliases IS OLD.aliases"
)
_HELD = (
    "EXISTS (SELECT 1 FROM search_documents WHERE key = NEW.key "
    f"AND version IN (OLD.version, NEW.version) AND analyser = {ANALYSER_VERSION})"
)
_MOVE = (
    "UPDATE search_documents SET version = NEW.version WHERE key = NEW.key "
    f"AND version = OLD.version AND analyser = {ANALYSER_VERSION};"
)
TRIGGERS = (
    "DROP TRIGGER IF EXISTS temp.search_on_insert",
    "DROP TRIGGER IF EXISTS temp.search_on_update",
    "DROP TRIGGER IF EXISTS temp.search_on_same",
    "DROP TRIGGER IF EXISTS temp.search_on_tombstone",
    "DROP TRIGGER IF EXISTS temp.search_on_delete",
    "CREATE TEMP TRIGGER search_on_insert AFTER INSERT ON memory_objects "
    f"WHEN NEW.tombstone = 0 BEGIN {_index('NULL, NULL, NULL, NULL')} END",
    # An UPDATE never changes a key, so NEW's previous terms are OLD's.
    "CREATE TEMP TRIGGER search_on_update AFTER UPDATE ON memory_objects "
    f"WHEN NEW.tombstone = 0 AND NOT ({_SAME} AND {_HELD}) "
    f"BEGIN {_index(_REPLACED)} END",
    "CREATE TEMP TRIGGER search_on_same AFTER UPDATE ON memory_objects "
    f"WHEN NEW.tombstone = 0 AND {_SAME} BEGIN {_MOVE} END",
    "CREATE TEMP TRIGGER search_on_tombstone AFTER UPDATE ON memory_objects "
    f"WHEN NEW.tombstone != 0 BEGIN {_FORGET.format(row='OLD')} END",
    "CREATE TEMP TRIGGER search_on_delete AFTER DELETE ON memory_objects "
    f"BEGIN {_FORGET.format(row='OLD')} END",
)


def index_rows(
    connection: sqlite3.Connection, rows: list[tuple[str, bytes, str, str, str]]
) -> None:
    """Re-index (key, data, description, aliases, version) rows, in a transaction."""
    forget_rows(connection, [row[0] for row in rows])
    for key, data, description, aliases, version in rows:
        analysis = analyse_row(key, data, description, aliases)
        postings = term_rows(analysis)
        connection.execute(
            "INSERT INTO search_documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                version,
                ANALYSER_VERSION,
                *analysis.lengths,
                *(f.runs for f in analysis.fields),
                json.dumps(postings, ensure_ascii=False),
            ),
        )
        connection.executemany(
            "INSERT INTO search_terms VALUES (?, ?, ?)",
            [(term, key, counts) for term, counts in postings.items()],
        )


def forget_rows(connection: sqlite3.Connection, keys: list[str]) -> None:
    """Drop every search row of ``keys``, in the open transaction."""
    statements = _FORGET.format(row="doomed").replace("doomed.key", "?").split(";")
    for statement in filter(str.strip, statements):
        connection.executemany(statement, [(k,) * statement.count("?") for k in keys])


def keys_json(keys: Sequence[str]) -> str:
    return json.dumps(list(keys), ensure_ascii=False)


async def prepare_search(connection: aiosqlite.Connection) -> None:
    """Create the search tables when missing; index this connection's writes."""
    await install_triggers(connection, TABLES, TRIGGERS, (FUNCTION, 9, sql_analysis))
