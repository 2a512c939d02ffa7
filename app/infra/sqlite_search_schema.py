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

from app.features.search.domain.analysis import DocumentAnalysis, analyse, field_texts

from .sqlite_connection import translate_sqlite_error

ANALYSER_VERSION = 1
"""Bump when folding or tokens change: every row is then re-indexed lazily."""
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
CREATE TABLE IF NOT EXISTS search_words (
    word TEXT NOT NULL,
    key TEXT NOT NULL,
    tf_name INTEGER NOT NULL,
    tf_aliases INTEGER NOT NULL,
    tf_description INTEGER NOT NULL,
    tf_content INTEGER NOT NULL,
    PRIMARY KEY (word, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_words_by_key ON search_words (key, word);
CREATE TABLE IF NOT EXISTS search_grams (
    gram TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (gram, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_grams_by_key ON search_grams (key);
"""

_ANALYSIS = f"{FUNCTION}(NEW.key, NEW.data, NEW.description, NEW.aliases)"
_FORGET = """
    DELETE FROM search_words WHERE key = {row}.key;
    DELETE FROM search_grams WHERE key = {row}.key;
    DELETE FROM search_documents WHERE key = {row}.key;
"""
_INDEX = f"""
    {_FORGET.format(row="NEW")}
    INSERT INTO search_documents
    SELECT NEW.key, NEW.version, {ANALYSER_VERSION},
        j ->> '$.l[0]', j ->> '$.l[1]', j ->> '$.l[2]', j ->> '$.l[3]',
        j ->> '$.r[0]', j ->> '$.r[1]', j ->> '$.r[2]', j ->> '$.r[3]'
    FROM (SELECT {_ANALYSIS} AS j);
    INSERT INTO search_words
    SELECT value ->> 0, NEW.key, value ->> 1, value ->> 2, value ->> 3, value ->> 4
    FROM json_each({_ANALYSIS}, '$.w');
    INSERT INTO search_grams SELECT value, NEW.key FROM json_each({_ANALYSIS}, '$.g');
"""
TRIGGERS = (
    "DROP TRIGGER IF EXISTS temp.search_on_insert",
    "DROP TRIGGER IF EXISTS temp.search_on_update",
    "DROP TRIGGER IF EXISTS temp.search_on_delete",
    f"CREATE TEMP TRIGGER search_on_insert AFTER INSERT ON memory_objects "
    f"BEGIN {_INDEX} END",
    f"CREATE TEMP TRIGGER search_on_update AFTER UPDATE ON memory_objects "
    f"BEGIN {_FORGET.format(row='OLD')} {_INDEX} END",
    f"CREATE TEMP TRIGGER search_on_delete AFTER DELETE ON memory_objects "
    f"BEGIN {_FORGET.format(row='OLD')} END",
)


def analyse_row(
    key: str, data: bytes, description: str, aliases: str
) -> DocumentAnalysis:
    name = key.rsplit("/", 1)[-1].removesuffix(".md")
    content = bytes(data).decode(errors="replace")
    texts = field_texts(name, json.loads(aliases), description, content)
    return analyse(texts)


@functools.lru_cache(maxsize=8)
def analysis_json(key: str, data: bytes, description: str, aliases: str) -> str:
    """The row's analysis as JSON: lengths, runs, word counts and grams.

    One trigger calls this three times for the same row; the cache analyses once.
    """
    analysis = analyse_row(key, data, description, aliases)
    return json.dumps(
        {
            "l": list(analysis.lengths),
            "r": [f.runs for f in analysis.fields],
            "w": [[word, *counts] for word, counts in analysis.word_rows()],
            "g": sorted(analysis.grams()),
        },
        ensure_ascii=False,
    )


def _sql_analysis(key: Any, data: Any, description: Any, aliases: Any) -> str:
    return analysis_json(str(key), bytes(data), str(description), str(aliases))


def index_rows(
    connection: sqlite3.Connection, rows: list[tuple[str, bytes, str, str, str]]
) -> None:
    """Re-index (key, data, description, aliases, version) rows, in a transaction."""
    keys = [(row[0],) for row in rows]
    for table in ("search_words", "search_grams", "search_documents"):
        connection.executemany(f"DELETE FROM {table} WHERE key = ?", keys)
    for key, data, description, aliases, version in rows:
        analysis = analyse_row(key, data, description, aliases)
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
            "INSERT INTO search_words VALUES (?, ?, ?, ?, ?, ?)",
            [(word, key, *counts) for word, counts in analysis.word_rows()],
        )
        connection.executemany(
            "INSERT INTO search_grams VALUES (?, ?)",
            [(gram, key) for gram in sorted(analysis.grams())],
        )


def forget_rows(connection: sqlite3.Connection, keys: list[str]) -> None:
    for table in ("search_words", "search_grams", "search_documents"):
        connection.executemany(
            f"DELETE FROM {table} WHERE key = ?", [(k,) for k in keys]
        )


def keys_json(keys: Sequence[str]) -> str:
    return json.dumps(list(keys), ensure_ascii=False)


async def prepare_search(connection: aiosqlite.Connection) -> None:
    """Create the search tables when missing; index this connection's writes."""
    try:
        # aiosqlite leaves the callable's return type unknown.
        await connection.create_function(  # pyright: ignore[reportUnknownMemberType]
            FUNCTION, 4, _sql_analysis, deterministic=True
        )
        await connection.executescript(TABLES)
        for statement in TRIGGERS:
            await connection.execute(statement)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
