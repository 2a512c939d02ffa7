"""The SQLite change log: one row per recorded mutation, numbered per entity.

``ChangeLog.append`` runs inside the write's own transaction (``sqlite_writes``
``Landing``), right after its version record: the entry commits with the
mutation or not at all. Its ``seq`` is one past the entity's newest entry (an
empty log starts at ``first_seq``, the clock, so a log begun after a purge
reuses no number a cursor may hold), and SQLite lets one writer at a time into
the file, across processes, so an entity's entries are numbered in commit order
without a gap, and a reader never sees a later number before an earlier one.
The same step prunes a few entries older than the retention, never the newest
(it carries the count on), when the entity's oldest entry is past the retention:
entries are appended in time order, so until then none is.
"""

import sqlite3
from datetime import datetime, timedelta

import aiosqlite

from app.features.memory.domain import format_timestamp, parse_timestamp
from app.features.memory.ports import Change, ChangeLogPage, LoggedChange
from app.infra.change_numbers import first_seq
from app.infra.sqlite.connection import fetch_rows, translate_sqlite_error

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_changes (
    prefix TEXT NOT NULL,
    seq INTEGER NOT NULL,
    key TEXT NOT NULL,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    at TEXT NOT NULL,
    version TEXT NOT NULL,
    PRIMARY KEY (prefix, seq)
) WITHOUT ROWID
"""
_NEWEST = "SELECT max(seq) FROM memory_changes WHERE prefix = ?"
_NEWEST_AND_DUE = """
SELECT max(seq), (SELECT julianday(at) < julianday(?) - ? FROM memory_changes
    WHERE prefix = ? ORDER BY seq LIMIT 1)
FROM memory_changes WHERE prefix = ?
"""
"""The entity's newest seq, and whether its oldest entry is past the retention
as of ``at`` (parameters: at, days, prefix, prefix)."""
_INSERT = "INSERT INTO memory_changes VALUES (?, ?, ?, ?, ?, ?, ?)"
# Only the entity's 8 oldest entries are looked at: entries are appended in time
# order, so when the oldest is still retained none after it is due. (Filtering by
# age before the LIMIT scanned every retained entry of the entity on each write.)
_PRUNE = """
DELETE FROM memory_changes WHERE prefix = :prefix AND seq IN (
    SELECT seq FROM (
        SELECT seq, at FROM memory_changes WHERE prefix = :prefix AND seq < :seq
        ORDER BY seq LIMIT 8)
    WHERE julianday(at) < julianday(:at) - :days)
"""
_PAGE = (
    "SELECT seq, key, operation, actor, at, version FROM memory_changes "
    "WHERE prefix = ? AND seq > ? AND julianday(at) >= julianday(?) "
    "ORDER BY seq LIMIT ?"
)
SCRUB = "DELETE FROM memory_changes WHERE prefix >= ? AND prefix < ?"


class ChangeLog:
    """Appends a landed change to its entity's log (on the write thread)."""

    __slots__ = ("_days", "retention")

    def __init__(self, retention: timedelta) -> None:
        self.retention = retention
        self._days = retention / timedelta(days=1)

    def append(
        self,
        db: sqlite3.Cursor,
        prefix: str,
        key: str,
        version: str,
        change: Change,
        at: str,
    ) -> None:
        """The entry of ``change`` to ``key`` of the entity ``prefix``; ``at`` is
        ``change.at`` formatted, which the write's history record stores too
        (both made once per write)."""
        newest, due = db.execute(
            _NEWEST_AND_DUE, (at, self._days, prefix, prefix)
        ).fetchone()
        seq = first_seq() if newest is None else int(newest) + 1
        db.execute(
            _INSERT, (prefix, seq, key, change.operation, change.actor, at, version)
        )
        if due:  # else the oldest entry is still kept, and so is every later one
            db.execute(
                _PRUNE, {"prefix": prefix, "seq": seq, "at": at, "days": self._days}
            )


async def prepare_change_log(connection: aiosqlite.Connection) -> None:
    """Add the change log table when missing."""
    try:
        await connection.executescript(_SCHEMA)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


async def change_page(
    connection: aiosqlite.Connection,
    prefix: str,
    after: int,
    *,
    since: datetime,
    limit: int,
) -> ChangeLogPage:
    """The entries of ``prefix`` after ``after`` kept since ``since``, and the
    newest seq read before them (``ChangeLogPage``)."""
    # The newest seq first: whatever the page then misses below it was pruned.
    newest = await fetch_rows(connection, _NEWEST, (prefix,))
    rows = await fetch_rows(
        connection, _PAGE, (prefix, after, format_timestamp(since), limit)
    )
    entries = [
        LoggedChange(int(seq), key, operation, actor, parse_timestamp(at), version)
        for seq, key, operation, actor, at, version in rows
    ]
    return ChangeLogPage(entries, int(newest[0][0] or 0))
