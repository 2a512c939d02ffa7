"""SQLite search tables, and the statements that keep them from ever answering stale.

Every file change of this process's storage runs, in its own transaction
(``sqlite_writes``): a created or changed file's key is marked pending in
``search_pending`` (one row however often it changes before it is indexed),
and a deleted file's postings and mark are removed at once (``FORGET``). A
search indexes the pending files of its reach before it ranks
(``sqlite_search_pending``).
Rows written by any other connection (a seeding script, an older process) are
marked pending the first time a process searches their prefix.
"""

import json
import sqlite3
from collections.abc import Sequence

import aiosqlite

from app.features.search.domain.analysis import COUNT_BITS
from app.infra.sqlite.connection import fetch_rows, translate_sqlite_error
from app.infra.sqlite.search_postings import GRAM_MARK, PREFIX_INDEX, PREFIX_MARK

__all__ = ["GRAM_MARK", "PREFIX_INDEX", "PREFIX_MARK"]

ANALYSER_VERSION = 8
"""Bump when folding, tokens or postings change: every row is then re-indexed
lazily. Deferring the indexing (``search_pending``) changed none of them: the
rows an earlier process wrote are exactly what this one writes."""

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
CREATE TABLE IF NOT EXISTS search_pending (key TEXT PRIMARY KEY) WITHOUT ROWID;
"""
SEARCH_TABLES = ("search_terms", "search_documents", "search_pending")


def _unpacked() -> tuple[str, ...]:
    columns: list[str] = []
    shift = 0
    for bits in COUNT_BITS:
        columns.append(f"((counts >> {shift}) & {(1 << bits) - 1})")
        shift += bits
    return tuple(columns)


UNPACKED = _unpacked()
"""SQL for each field's count in a ``search_terms`` row, in field order."""

# Postings are keyed by the file first: forgetting a file is one range.
FORGET = (
    "DELETE FROM search_terms WHERE key = ?",
    "DELETE FROM search_documents WHERE key = ?",
    "DELETE FROM search_pending WHERE key = ?",
)
"""The statements that drop every search row of one key (its one parameter)."""


def keys_json(keys: Sequence[str]) -> str:
    return json.dumps(list(keys), ensure_ascii=False)


async def prepare_search(connection: aiosqlite.Connection) -> None:
    """Create the search tables when missing."""
    columns = await fetch_rows(connection, "PRAGMA table_info(search_documents)", ())
    try:
        if any(column[1] == "terms" for column in columns):
            # Postings keyed by word first (analyser 7 and before): dropped, and
            # every file is indexed again lazily, as after any analyser change.
            await connection.executescript(_OLD_LAYOUT)
        await connection.executescript(TABLES)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


_OLD_LAYOUT = "DROP TABLE search_terms; DROP TABLE search_documents;"
