"""Point reads by key on the event loop's thread: one indexed SELECT, no hop.

A read of one file by its primary key costs SQLite a few microseconds; handing
it to the storage connection's thread (a queued job, a thread wake-up, the GIL
handed over and back, the loop woken through its self-pipe) costs many times
that. So ``fetch`` runs its SELECT on a second, query-only connection of the
same file, in autocommit: each statement is its own read transaction and sees
every commit made before it began, as a read on the storage thread does. A
WAL reader never waits for a writer; the rare lock a reader can meet (another
process recovering the WAL, a connection holding the file exclusively) answers
at once (``busy_timeout`` 0) and the read goes to the storage thread instead,
which may wait, so the loop never does.
"""

import sqlite3
from collections.abc import Generator, Sequence
from contextlib import contextmanager

import aiosqlite

from app.infra.sqlite.connection import fetch_rows, translate_sqlite_error

_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


class PointReads:
    """A query-only connection for short reads made on the loop's own thread."""

    def __init__(self, db: sqlite3.Connection, fallback: aiosqlite.Connection) -> None:
        self._db = db
        self._fallback = fallback
        self.deferred = 0
        """Reads a lock sent to the storage thread (tests read it)."""

    def rows(self, sql: str, parameters: Sequence[object]) -> list[sqlite3.Row] | None:
        """The statement's rows; None when a lock stands in the way."""
        try:
            return self._db.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            if exc.sqlite_errorcode & 0xFF in _BUSY:
                self.deferred += 1
                return None
            raise translate_sqlite_error(exc) from exc

    async def fetch(self, sql: str, parameters: Sequence[object]) -> list[sqlite3.Row]:
        """The statement's rows, read here, or on the storage thread if locked."""
        rows = self.rows(sql, parameters)
        return (
            await fetch_rows(self._fallback, sql, parameters) if rows is None else rows
        )


@contextmanager
def open_point_reads(
    path: str, fallback: aiosqlite.Connection
) -> Generator[PointReads]:
    """Point reads of the database at ``path``; ``fallback`` reads when locked."""
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA busy_timeout = 0")
        db.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
    try:
        yield PointReads(db, fallback)
    finally:
        db.close()
