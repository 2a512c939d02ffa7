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

from .sqlite_connection import fetch_rows, install_triggers
from .sqlite_search_postings import (
    GRAM_MARK,
    PREFIX_INDEX,
    PREFIX_MARK,
    analyse_row,
    sql_analysis,
    term_rows,
)

__all__ = ["GRAM_MARK", "PREFIX_INDEX", "PREFIX_MARK"]

ANALYSER_VERSION = 8
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
    runs_content TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_documents_lengths ON search_documents (
    key, len_name, len_aliases, len_description, len_content
);
CREATE TABLE IF NOT EXISTS search_terms (
    key TEXT NOT NULL,
    term TEXT NOT NULL,
    counts INTEGER NOT NULL,
    PRIMARY KEY (key, term)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_terms_by_term ON search_terms (term, key);
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

# A file's postings are keyed by the file first: the rows one write changes
# lie side by side on a page or two (one per word would be scattered over the
# whole table), and forgetting a file is one range. Searches find a word's
# files through ``search_terms_by_term``; a write touches that index only for
# a word the file gains or loses, never for a count.
_FORGET = """
    DELETE FROM search_terms WHERE key = {row}.key;
    DELETE FROM search_documents WHERE key = {row}.key;
"""
# The analysis runs once per statement and waits in the connection's own TEMP
# table ``search_step`` for the statements that apply it (a TEMP trigger
# resolves the name there first; the row goes before the statement ends).
# It names what to add to each postings row it changes ('$.d'), the rows that
# may reach 0 ('$.z'), and whether it is a whole analysis ('$.w': every row of
# the file is dropped first and '$.d' is all of them). An update gives the row
# it replaces and, if the index holds that very version, its document row:
# then only the lines the write changed are analysed. The document row goes
# last, so every statement sees the same previous one.
_REPLACED = f"""OLD.data, OLD.description, OLD.aliases,
    (SELECT json_array(len_name, len_aliases, len_description, len_content,
        runs_name, runs_aliases, runs_description, runs_content)
     FROM search_documents
     WHERE key = NEW.key AND version = OLD.version AND analyser = {ANALYSER_VERSION})"""
_ANALYSIS = f"""(SELECT {FUNCTION}(NEW.key, NEW.data, NEW.description, NEW.aliases,
    {{replaced}}))"""
_INDEX = """
    INSERT OR REPLACE INTO search_step VALUES (1, {analysis});
    DELETE FROM search_terms WHERE key = NEW.key
        AND (SELECT j ->> '$.w' FROM search_step);
    INSERT INTO search_terms (key, term, counts)
    SELECT NEW.key, e.key, e.value FROM search_step, json_each(j, '$.d') AS e
    WHERE true
    ON CONFLICT (key, term) DO UPDATE SET counts = counts + excluded.counts;
    DELETE FROM search_terms WHERE key = NEW.key AND counts = 0 AND term IN (
        SELECT e.value FROM search_step, json_each(j, '$.z') AS e);
    INSERT OR REPLACE INTO search_documents
    SELECT NEW.key, NEW.version, {version},
        j ->> '$.l[0]', j ->> '$.l[1]', j ->> '$.l[2]', j ->> '$.l[3]',
        j ->> '$.r[0]', j ->> '$.r[1]', j ->> '$.r[2]', j ->> '$.r[3]'
    FROM search_step;
    DELETE FROM search_step;
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
            "INSERT INTO search_documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                version,
                ANALYSER_VERSION,
                *analysis.lengths,
                *(f.runs for f in analysis.fields),
            ),
        )
        connection.executemany(
            "INSERT INTO search_terms (key, term, counts) VALUES (?, ?, ?)",
            [(key, term, counts) for term, counts in postings.items()],
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
    columns = await fetch_rows(connection, "PRAGMA table_info(search_documents)", ())
    if any(column[1] == "terms" for column in columns):
        # Postings keyed by word first (analyser 7 and before): dropped, and
        # every file is indexed again lazily, as after any analyser change.
        await connection.executescript(_OLD_LAYOUT)
    schema = f"{TABLES}{_STEP}"
    await install_triggers(connection, schema, TRIGGERS, (FUNCTION, 8, sql_analysis))


_STEP = """
CREATE TEMP TABLE IF NOT EXISTS search_step (
    one INTEGER PRIMARY KEY CHECK (one = 1),  -- never a second, stale row
    j TEXT NOT NULL
);
"""
_OLD_LAYOUT = "DROP TABLE search_terms; DROP TABLE search_documents;"
