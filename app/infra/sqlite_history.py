"""SQLite version history: a table, and triggers that record every landed mutation.

A mutation that carries a change stores its operation, actor and time on the
object's row; per-connection triggers copy that row into ``memory_history``
inside the very statement that changed it, so a record exists exactly when its
mutation committed. A recorded delete is an UPDATE that marks the row as a
tombstone; its trigger records the tombstone and removes the row. The same
triggers prune the key's history to the retention this process was opened
with (at most ``PRUNE_PER_WRITE`` rows per limit and write, never the newest).
``history_page`` and ``history_version`` read the records back.
"""

import sqlite3
from typing import Any

import aiosqlite

from app.features.memory.ports import HistoryRetention, VersionRecord

from .history_records import PRUNE_PER_WRITE
from .sqlite_connection import fetch_rows, translate_sqlite_error
from .sqlite_rows import record_from

OBJECTS_TABLE = """
CREATE TABLE IF NOT EXISTS memory_objects (
    key TEXT PRIMARY KEY,
    data BLOB NOT NULL,
    description TEXT NOT NULL,
    aliases TEXT NOT NULL,
    sources TEXT NOT NULL,
    last_updated TEXT NOT NULL,
    version TEXT NOT NULL,
    operation TEXT,
    actor TEXT,
    changed_at TEXT,
    tombstone INTEGER NOT NULL DEFAULT 0,
    audit_event TEXT
) WITHOUT ROWID
"""
# Databases created before history get the change columns added in place.
_CHANGE_COLUMNS = {
    "operation": "TEXT",
    "actor": "TEXT",
    "changed_at": "TEXT",
    "tombstone": "INTEGER NOT NULL DEFAULT 0",
    "audit_event": "TEXT",  # the call's audit event, see sqlite_audit_events
}
_HISTORY = """
CREATE TABLE IF NOT EXISTS memory_history (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    version TEXT NOT NULL,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL,
    description TEXT NOT NULL,
    aliases TEXT NOT NULL,
    sources TEXT NOT NULL,
    last_updated TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_history_by_key ON memory_history (key, seq);
CREATE INDEX IF NOT EXISTS memory_history_by_age
    ON memory_history (key, julianday(last_updated));
"""
_RECORD = """
    INSERT INTO memory_history (key, version, operation, actor, deleted, size, data,
        description, aliases, sources, last_updated)
    VALUES (NEW.key, NEW.version, NEW.operation, NEW.actor, NEW.tombstone,
        CASE NEW.tombstone WHEN 0 THEN length(NEW.data) ELSE 0 END,
        CASE NEW.tombstone WHEN 0 THEN NEW.data ELSE X'' END,
        NEW.description, NEW.aliases, NEW.sources, NEW.last_updated);
"""
RECORD_COLUMNS = (
    "version, operation, actor, deleted, size, description, aliases, sources, "
    "last_updated"
)


def _prune(retention: HistoryRetention) -> str:
    # Plain range deletes bounded by scalar subqueries over a few index
    # entries: no IN list or UNION for SQLite to build temporary b-trees for on
    # every write. The count limit drops the oldest records beyond it (a prefix
    # of the key's records); the age limit drops records past it wherever they
    # are, found through ``memory_history_by_age`` (only when there are some
    # are they sorted by seq). Each limit takes at most ``PRUNE_PER_WRITE`` a
    # write, oldest first, never the newest.
    oldest = f"""(SELECT seq FROM memory_history {{index}} WHERE key = NEW.key
        {{where}} ORDER BY seq LIMIT 1 OFFSET {PRUNE_PER_WRITE - 1})"""
    beyond = f"""(SELECT seq FROM memory_history WHERE key = NEW.key
        ORDER BY seq DESC LIMIT 1 OFFSET {retention.max_versions})"""
    by_count = f"""
    DELETE FROM memory_history WHERE key = NEW.key AND seq <= {beyond}
        AND seq <= coalesce({oldest.format(index="", where="")}, {beyond});
"""
    if not retention.max_days:
        return by_count
    old = f"julianday(last_updated) < julianday(NEW.changed_at) - {retention.max_days}"
    newest = "(SELECT max(seq) FROM memory_history WHERE key = NEW.key)"
    fourth = oldest.format(index="INDEXED BY memory_history_by_age", where=f"AND {old}")
    return f"""{by_count}
    DELETE FROM memory_history WHERE key = NEW.key AND {old} AND seq < {newest}
        AND seq <= coalesce({fourth}, {newest});
"""


def _triggers(retention: HistoryRetention) -> list[str]:
    prune = _prune(retention)
    return [
        "DROP TRIGGER IF EXISTS temp.history_on_insert",
        "DROP TRIGGER IF EXISTS temp.history_on_update",
        "CREATE TEMP TRIGGER history_on_insert AFTER INSERT ON memory_objects "
        f"WHEN NEW.operation IS NOT NULL BEGIN {_RECORD} {prune} END",
        "CREATE TEMP TRIGGER history_on_update AFTER UPDATE ON memory_objects "
        f"WHEN NEW.operation IS NOT NULL BEGIN {_RECORD} {prune} "
        "DELETE FROM memory_objects WHERE key = NEW.key AND NEW.tombstone = 1; END",
    ]


async def prepare_history(
    connection: aiosqlite.Connection, retention: HistoryRetention
) -> None:
    """Add the history table and columns when missing; install the triggers."""
    try:
        rows = await connection.execute_fetchall("PRAGMA table_info(memory_objects)")
        present = {row[1] for row in rows}
        for column, kind in _CHANGE_COLUMNS.items():
            if column not in present:
                await _add_column(connection, column, kind)
        await connection.executescript(_HISTORY)
        for statement in _triggers(retention):
            await connection.execute(statement)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


async def _add_column(connection: aiosqlite.Connection, column: str, kind: str) -> None:
    try:
        await connection.execute(
            f"ALTER TABLE memory_objects ADD COLUMN {column} {kind}"
        )
    except sqlite3.OperationalError as exc:
        # Another process opening the same file may have added it first.
        if "duplicate column" not in str(exc).lower():
            raise


async def history_page(
    connection: aiosqlite.Connection, key: str, *, after: str | None, limit: int
) -> list[VersionRecord]:
    """Up to ``limit`` records of ``key``, newest first, older than ``after``."""
    parameters: tuple[Any, ...]
    if after is None:
        where, parameters = "key = ?", (key, limit)
    else:
        where = (
            "key = ? AND seq < (SELECT seq FROM memory_history "
            "WHERE key = ? AND version = ?)"
        )
        parameters = (key, key, after, limit)
    rows = await fetch_rows(
        connection,
        f"SELECT {RECORD_COLUMNS} FROM memory_history WHERE {where} "
        "ORDER BY seq DESC LIMIT ?",
        parameters,
    )
    return [record_from(row, None) for row in rows]


async def history_version(
    connection: aiosqlite.Connection, key: str, version: str
) -> VersionRecord | None:
    """The newest record of ``key`` at ``version``, with its content."""
    rows = await fetch_rows(
        connection,
        f"SELECT {RECORD_COLUMNS}, data FROM memory_history "
        "WHERE key = ? AND version = ? ORDER BY seq DESC LIMIT 1",
        (key, version),
    )
    return record_from(rows[0], bytes(rows[0][9])) if rows else None
