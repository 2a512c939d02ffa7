"""SQLite version history: triggers that record every landed mutation, and its reads.

A mutation that carries a change stores its operation, actor and time on the
object's row; per-connection triggers copy that row into ``memory_history``
inside the very statement that changed it, so a record exists exactly when its
mutation committed. A recorded delete is an UPDATE that marks the row as a
tombstone; its trigger records the tombstone and removes the row. The same
triggers prune the key's history to the retention this process was opened
with (at most ``PRUNE_PER_WRITE`` rows per limit and write, never the newest).
The table, clustered by key, is ``sqlite_history_table``'s.
``history_page`` and ``history_version`` read the records back.
"""

import sqlite3
from typing import Any

import aiosqlite

from app.features.memory.ports import HistoryRetention, VersionRecord

from .history_records import PRUNE_PER_WRITE
from .sqlite_connection import fetch_rows, translate_sqlite_error
from .sqlite_history_table import prepare_history_table
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
_RECORD = """
    INSERT INTO memory_history (key, seq, age, version, operation, actor, deleted,
        size, description, aliases, sources, last_updated, data)
    VALUES (NEW.key,
        coalesce((SELECT max(seq) FROM memory_history WHERE key = NEW.key), 0) + 1,
        julianday(NEW.last_updated), NEW.version, NEW.operation, NEW.actor,
        NEW.tombstone, CASE NEW.tombstone WHEN 0 THEN length(NEW.data) ELSE 0 END,
        NEW.description, NEW.aliases, NEW.sources, NEW.last_updated,
        CASE NEW.tombstone WHEN 0 THEN NEW.data ELSE X'' END);
"""
RECORD_COLUMNS = (
    "version, operation, actor, deleted, size, description, aliases, sources, "
    "last_updated"
)


def _prune(retention: HistoryRetention) -> str:
    # Runs before the new record is inserted, so pages it frees (a long body's
    # overflow pages) are reused by that insert in the same transaction; every
    # record there now is older than the one to come, which is never pruned.
    # The key's records are one run of the clustered table, in seq order: each
    # limit is a range delete bounded by a scalar subquery over that run (no IN
    # list or UNION for SQLite to build temporary b-trees for on every write).
    # The count limit drops the oldest records beyond it (a prefix of the run);
    # the age limit drops records past it wherever they are, found by one scan
    # of the run's ``age`` (at most ``max_versions`` rows). Each limit takes at
    # most ``PRUNE_PER_WRITE`` a write, oldest first.
    beyond = f"""(SELECT seq FROM memory_history WHERE key = NEW.key
        ORDER BY seq DESC LIMIT 1 OFFSET {retention.max_versions - 1})"""
    oldest = f"""(SELECT seq FROM memory_history WHERE key = NEW.key
        ORDER BY seq LIMIT 1 OFFSET {PRUNE_PER_WRITE - 1})"""
    by_count = f"""
    DELETE FROM memory_history WHERE key = NEW.key AND seq <= {beyond}
        AND seq <= coalesce({oldest}, {beyond});
"""
    if not retention.max_days:
        return by_count
    old = f"age < julianday(NEW.changed_at) - {retention.max_days}"
    last = f"""(SELECT max(seq) FROM (SELECT seq FROM memory_history
        WHERE key = NEW.key AND {old} ORDER BY seq LIMIT {PRUNE_PER_WRITE}))"""
    return f"""{by_count}
    DELETE FROM memory_history WHERE key = NEW.key AND seq <= {last} AND {old};
"""


def _triggers(retention: HistoryRetention) -> list[str]:
    prune = _prune(retention)
    return [
        "DROP TRIGGER IF EXISTS temp.history_on_insert",
        "DROP TRIGGER IF EXISTS temp.history_on_update",
        "CREATE TEMP TRIGGER history_on_insert AFTER INSERT ON memory_objects "
        f"WHEN NEW.operation IS NOT NULL BEGIN {prune} {_RECORD} END",
        "CREATE TEMP TRIGGER history_on_update AFTER UPDATE ON memory_objects "
        f"WHEN NEW.operation IS NOT NULL BEGIN {prune} {_RECORD} "
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
        await prepare_history_table(connection)
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
