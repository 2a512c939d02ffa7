"""Indexing the files marked pending, in short write transactions.

A batch takes the write lock for a bounded amount of work (a number of files
and of bytes analysed), indexes each pending file as it now is (or forgets it
when it is gone) and clears the marks it handled, all in one transaction: a
search, the background drain and any other process see either all of it or
none of it.
"""

import sqlite3

from .sqlite_search_postings import index_file
from .sqlite_search_schema import ANALYSER_VERSION, FORGET

type Where = tuple[str, list[str]]
"""A WHERE clause over ``key`` and its values (``sqlite_search.ranges``)."""

EVERYWHERE: Where = ("true", [])
BATCH_FILES = 64
BATCH_BYTES = 1 << 20
"""A batch stops after the file that brings it past this many bytes of content."""

_ROW = """
SELECT key, data, description, aliases, version FROM memory_objects
WHERE key = ? AND tombstone = 0
"""
_STALE = f"""
INSERT OR IGNORE INTO search_pending
SELECT m.key FROM memory_objects m
LEFT JOIN search_documents d ON d.key = m.key
WHERE m.key >= ? AND m.key < ? AND m.tombstone = 0
  AND (d.key IS NULL OR d.version != m.version OR d.analyser != {ANALYSER_VERSION})
UNION ALL
SELECT d.key FROM search_documents d LEFT JOIN memory_objects m ON m.key = d.key
WHERE d.key >= ? AND d.key < ? AND (m.key IS NULL OR m.tombstone != 0)
"""


def any_pending(connection: sqlite3.Connection, where: Where) -> bool:
    clause, values = where
    sql = f"SELECT EXISTS (SELECT 1 FROM search_pending WHERE {clause})"
    return bool(connection.execute(sql, values).fetchone()[0])


def index_pending(connection: sqlite3.Connection, where: Where) -> bool:
    """Index one batch of the pending files under ``where`` in a transaction of
    its own; whether more remain."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        more = index_batch(connection, where)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return more


def index_batch(connection: sqlite3.Connection, where: Where) -> bool:
    """Index one batch of the pending files under ``where``, in the open write
    transaction; whether more remain."""
    clause, values = where
    keys = connection.execute(
        f"SELECT key FROM search_pending WHERE {clause} LIMIT ?",
        [*values, BATCH_FILES + 1],
    ).fetchall()
    done = _index_keys(connection, [key for (key,) in keys[:BATCH_FILES]])
    connection.executemany("DELETE FROM search_pending WHERE key = ?", done)
    return len(keys) > len(done)


def _index_keys(connection: sqlite3.Connection, keys: list[str]) -> list[tuple[str]]:
    done: list[tuple[str]] = []
    analysed = 0
    for key in keys:
        row = connection.execute(_ROW, (key,)).fetchone()
        if row is None:
            for statement in FORGET:
                connection.execute(statement, (key,))
        else:
            index_file(connection, row, ANALYSER_VERSION)
            analysed += len(row[1])
        done.append((key,))
        if analysed >= BATCH_BYTES:
            break
    return done


def mark_stale(connection: sqlite3.Connection, bounds: tuple[str, str]) -> None:
    """Mark pending what the index holds wrongly under a prefix: rows written
    without the triggers, or indexed by another analyser, or gone."""
    connection.execute(_STALE, (*bounds, *bounds))
