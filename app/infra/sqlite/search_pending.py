"""Indexing the files marked pending, in short write transactions.

A batch takes the write lock for a bounded amount of work (a number of files
and of bytes analysed), indexes each pending file as it now is (or forgets it
when it is gone) and clears the marks it handled, all in one transaction: a
search, the background drain and any other process see either all of it or
none of it. A search indexes in large batches (its caller is waiting for
them); the background drain in small ones, so no request waits long behind
one (the analysis is Python: it holds the interpreter while it runs).
"""

import sqlite3

from app.infra.sqlite.search_postings import index_file
from app.infra.sqlite.search_schema import ANALYSER_VERSION, FORGET

type Where = tuple[str, list[str]]
"""A WHERE clause over ``key`` and its values (``sqlite_search.ranges``)."""

EVERYWHERE: Where = ("true", [])

type Bound = tuple[int, int]
"""A batch's files at most, and the bytes of content after which it stops
(after the file that brings it past them)."""
SEARCH_BATCH: Bound = (64, 1 << 20)
DRAIN_BATCH: Bound = (32, 64 << 10)
"""The drain's piece: it holds the write lock (and the search connection) for
tens of milliseconds, not a search batch's hundreds (only a single file larger
than this makes it longer). Smaller pieces would cost more in all: each one
commits, and rewrites the by-word index pages the one before wrote."""

_ROW = """
SELECT key, data, description, aliases, version FROM memory_objects
WHERE key = ?
"""
_STALE = f"""
INSERT OR IGNORE INTO search_pending
SELECT m.key FROM memory_objects m
LEFT JOIN search_documents d ON d.key = m.key
WHERE m.key >= ? AND m.key < ?
  AND (d.key IS NULL OR d.version != m.version OR d.analyser != {ANALYSER_VERSION})
UNION ALL
SELECT d.key FROM search_documents d LEFT JOIN memory_objects m ON m.key = d.key
WHERE d.key >= ? AND d.key < ? AND m.key IS NULL
"""


def any_pending(connection: sqlite3.Connection, where: Where) -> bool:
    clause, values = where
    sql = f"SELECT EXISTS (SELECT 1 FROM search_pending WHERE {clause})"
    return bool(connection.execute(sql, values).fetchone()[0])


def index_pending(
    connection: sqlite3.Connection, where: Where, bound: Bound = SEARCH_BATCH
) -> bool:
    """Index one batch of the pending files under ``where`` in a transaction of
    its own; whether more remain."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        more = index_batch(connection, where, bound)
    except BaseException:  # rolled back, then re-raised unchanged
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return more


def index_batch(
    connection: sqlite3.Connection, where: Where, bound: Bound = SEARCH_BATCH
) -> bool:
    """Index one batch of the pending files under ``where``, in the open write
    transaction; whether more remain."""
    clause, values = where
    files, most = bound
    keys = connection.execute(
        f"SELECT key FROM search_pending WHERE {clause} LIMIT ?",
        [*values, files + 1],
    ).fetchall()
    done = _index_keys(connection, [key for (key,) in keys[:files]], most)
    connection.executemany("DELETE FROM search_pending WHERE key = ?", done)
    return len(keys) > len(done)


def _index_keys(
    connection: sqlite3.Connection, keys: list[str], most: int
) -> list[tuple[str]]:
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
        if analysed >= most:
            break
    return done


def mark_stale(connection: sqlite3.Connection, bounds: tuple[str, str]) -> None:
    """Mark pending what the index holds wrongly under a prefix: rows written
    by another connection, or indexed by another analyser, or gone."""
    connection.execute(_STALE, (*bounds, *bounds))
