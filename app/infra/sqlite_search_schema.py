"""SQLite search tables, the analysis function and the triggers that fill them.

Temporary triggers on this process's write connection index every row the
statement that changed it wrote, inside that statement: the index commits with
the write or not at all. Rows written by any other connection (a seeding
script, an older process) are brought up to date before a prefix is searched.
"""

import functools
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite

from app.features.search.domain.analysis import (
    COUNT_BITS,
    DocumentAnalysis,
    analyse,
    field_texts,
)

from .sqlite_connection import install_triggers

ANALYSER_VERSION = 6
"""Bump when folding or tokens change: every row is then re-indexed lazily."""
FUNCTION = "wenchang_search_analysis"
PREFIX_INDEX = 1
"""Word prefixes up to this length get postings rows of their own: a one-letter
prefix starts so many words that scanning their postings would be slow."""
PREFIX_MARK = "\x1e"
"""Starts a prefix term's row; no word starts with it, so word ranges skip them."""
GRAM_MARK = "\x1f"
"""Starts a run gram's row (its counts are unused)."""

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
# the few postings it changed, not all of them. The document row goes last,
# so every statement sees the same previous terms.
_ANALYSIS = f"""(SELECT {FUNCTION}(NEW.key, NEW.data, NEW.description, NEW.aliases,
    (SELECT terms FROM search_documents WHERE key = NEW.key)))"""
_INDEX = f"""
    DELETE FROM search_terms WHERE key = NEW.key AND term IN (
        SELECT value FROM json_each({_ANALYSIS}, '$.g'));
    INSERT INTO search_terms
    SELECT key, NEW.key, value FROM json_each({_ANALYSIS}, '$.s') WHERE true
    ON CONFLICT (term, key) DO UPDATE SET counts = excluded.counts;
    INSERT OR REPLACE INTO search_documents
    SELECT NEW.key, NEW.version, {ANALYSER_VERSION},
        j ->> '$.l[0]', j ->> '$.l[1]', j ->> '$.l[2]', j ->> '$.l[3]',
        j ->> '$.r[0]', j ->> '$.r[1]', j ->> '$.r[2]', j ->> '$.r[3]', j -> '$.t'
    FROM (SELECT {_ANALYSIS} AS j);
"""
# A recorded delete first marks the row a tombstone (``sqlite_history``), then
# removes it: a tombstone is never indexed, only forgotten.
TRIGGERS = (
    "DROP TRIGGER IF EXISTS temp.search_on_insert",
    "DROP TRIGGER IF EXISTS temp.search_on_update",
    "DROP TRIGGER IF EXISTS temp.search_on_tombstone",
    "DROP TRIGGER IF EXISTS temp.search_on_delete",
    "CREATE TEMP TRIGGER search_on_insert AFTER INSERT ON memory_objects "
    f"WHEN NEW.tombstone = 0 BEGIN {_INDEX} END",
    # An UPDATE never changes a key, so NEW's previous terms are OLD's.
    "CREATE TEMP TRIGGER search_on_update AFTER UPDATE ON memory_objects "
    f"WHEN NEW.tombstone = 0 BEGIN {_INDEX} END",
    "CREATE TEMP TRIGGER search_on_tombstone AFTER UPDATE ON memory_objects "
    f"WHEN NEW.tombstone != 0 BEGIN {_FORGET.format(row='OLD')} END",
    "CREATE TEMP TRIGGER search_on_delete AFTER DELETE ON memory_objects "
    f"BEGIN {_FORGET.format(row='OLD')} END",
)


def analyse_row(
    key: str, data: bytes, description: str, aliases: str
) -> DocumentAnalysis:
    name = key.rsplit("/", 1)[-1].removesuffix(".md")
    content = bytes(data).decode(errors="replace")
    texts = field_texts(name, json.loads(aliases), description, content)
    return analyse(texts)


_SHIFTS = (0, COUNT_BITS[0], COUNT_BITS[0] + COUNT_BITS[1], sum(COUNT_BITS[:3]))


def term_rows(analysis: DocumentAnalysis) -> dict[str, int]:
    """Postings of one file, term to packed counts: words, prefixes and grams.

    Packed counts add up field by field without carrying (``FOLDED_LIMITS``),
    so a prefix's row is the plain sum of its words' rows.
    """
    rows: dict[str, int] = {}
    for shift, field in zip(_SHIFTS, analysis.fields, strict=True):
        for word, count in field.words.items():
            rows[word] = rows.get(word, 0) | count << shift
    prefixes: dict[str, int] = {}
    for word, packed in rows.items():
        prefix = PREFIX_MARK + word[:PREFIX_INDEX]
        prefixes[prefix] = prefixes.get(prefix, 0) + packed
    grams = dict.fromkeys((GRAM_MARK + g for g in analysis.grams()), 0)
    return rows | prefixes | grams


@functools.lru_cache(maxsize=8)
def analysis_json(
    key: str, data: bytes, description: str, aliases: str, indexed: str | None
) -> str:
    """The row's analysis as JSON: lengths, runs, postings (``t``), and the
    change from the postings ``indexed`` now: terms gone (``g``) and rows to
    set (``s``).

    A trigger calls this once per statement for the same row; the cache
    analyses once.
    """
    analysis = analyse_row(key, data, description, aliases)
    postings = term_rows(analysis)
    before: dict[str, int] = json.loads(indexed) if indexed else {}
    return json.dumps(
        {
            "l": analysis.lengths,
            "r": [f.runs for f in analysis.fields],
            "t": postings,
            "g": [term for term in before if term not in postings],
            "s": {t: n for t, n in postings.items() if before.get(t) != n},
        },
        ensure_ascii=False,
    )


def _sql_analysis(
    key: Any, data: Any, description: Any, aliases: Any, indexed: Any
) -> str:
    return analysis_json(
        str(key),
        bytes(data),
        str(description),
        str(aliases),
        None if indexed is None else str(indexed),
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
    await install_triggers(connection, TABLES, TRIGGERS, (FUNCTION, 5, _sql_analysis))
