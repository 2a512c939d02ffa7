"""SQLite version history: triggers that record every landed mutation, and its reads.

A mutation that carries a change stores its operation, actor and time on the
object's row; per-connection triggers copy that row into ``memory_history``
inside the very statement that changed it, so a record exists exactly when its
mutation committed. A recorded delete is an UPDATE that marks the row as a
tombstone; its trigger records the tombstone and removes the row. The same
triggers prune the key's history to the retention this process was opened
with (at most ``PRUNE_PER_WRITE`` rows per limit and write, never the newest).
The table, clustered by key, is ``sqlite_history_table``'s; how a record keeps
long content, ``sqlite_history_pack``'s.
``history_page`` and ``history_version`` read the records back.
"""

import sqlite3
from typing import Any

import aiosqlite

from app.features.memory.ports import HistoryRetention, VersionRecord

from .history_records import PRUNE_PER_WRITE
from .sqlite_connection import fetch_rows, translate_sqlite_error
from .sqlite_history_pack import packed, prepare_pack, unpack
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
_NEWEST = "FROM memory_history AS h WHERE key = NEW.key ORDER BY seq DESC LIMIT 1"
"""The key's newest record ``h`` as a scalar subquery's source: one seek from
the end of the key's run, no row (so NULL) for a key without records. Each
value a statement needs of it is one such subquery (a join with it would make
the INSERT, which then reads its own table, copy its rows to a temporary table)."""
_AGE = "julianday(NEW.last_updated)"
RECORD_COLUMNS = (
    "version, operation, actor, deleted, size, description, aliases, sources, "
    "last_updated"
)


def _record(retention: HistoryRetention) -> str:
    # ``n`` and ``floor`` carry on from the key's newest record (read after the
    # count prune, which removed exactly ``_doomed`` of its ``n``): no write
    # counts or scans the key's records to know how many it has or how old
    # the oldest may be.
    doomed = _doomed(retention)
    return f"""
    INSERT INTO memory_history (key, seq, n, floor, version, operation, actor,
        deleted, size, description, aliases, sources, last_updated, data)
    VALUES (NEW.key, coalesce((SELECT h.seq {_NEWEST}), 0) + 1,
        coalesce((SELECT h.n - {doomed} + 1 {_NEWEST}), 1),
        coalesce((SELECT min(coalesce(h.floor, {_AGE}), coalesce({_AGE}, h.floor))
            {_NEWEST}), {_AGE}),
        NEW.version, NEW.operation, NEW.actor, NEW.tombstone,
        CASE NEW.tombstone WHEN 0 THEN length(NEW.data) ELSE 0 END,
        NEW.description, NEW.aliases, NEW.sources, NEW.last_updated,
        CASE NEW.tombstone WHEN 0 THEN {packed("NEW.data")} ELSE X'' END);
"""


def _doomed(retention: HistoryRetention) -> str:
    """How many of the key's oldest records the count limit removes this write,
    from the newest record ``h`` (a key without records has none to remove)."""
    beyond = f"h.n - {retention.max_versions - 1}"
    return f"max(0, min({PRUNE_PER_WRITE}, {beyond}))"


def _by_count(retention: HistoryRetention) -> str:
    # Before the insert, so the pages it frees (a long body's overflow pages)
    # are reused by that insert in the same transaction. It removes the oldest
    # records beyond the limit (the new one counted), a prefix of the key's run:
    # the first ``doomed`` (LIMIT 0 reads none).
    doomed = f"coalesce((SELECT {_doomed(retention)} {_NEWEST}), 0)"
    first = f"""(SELECT max(seq) FROM (SELECT seq FROM memory_history
        WHERE key = NEW.key ORDER BY seq LIMIT {doomed}))"""
    return f"DELETE FROM memory_history WHERE key = NEW.key AND seq <= {first};"


def _by_age(retention: HistoryRetention) -> str:
    # After the insert (never the newest). The newest record's ``floor`` is at
    # most the age of every record of the key, so while it is within the limit
    # nothing is old and no record is read. Otherwise the oldest records past
    # the limit go (scanning the key's run), then the newest's ``n`` and
    # ``floor`` are counted afresh.
    cutoff = f"julianday(NEW.changed_at) - {retention.max_days}"
    old = f"julianday(last_updated) < {cutoff}"
    # The newest's seq when its floor is past the limit, else NULL: the guard
    # bounds the seq range (NULL: an empty range, nothing read); as a plain
    # term SQLite would test it on each record of the scan.
    guarded = f"(SELECT CASE WHEN h.floor < {cutoff} THEN h.seq END {_NEWEST})"
    last = f"""(SELECT max(seq) FROM (SELECT seq FROM memory_history
        WHERE key = NEW.key AND seq < {guarded} AND {old}
        ORDER BY seq LIMIT {PRUNE_PER_WRITE}))"""
    return f"""
    DELETE FROM memory_history WHERE key = NEW.key AND seq <= {last} AND {old};
    UPDATE memory_history SET
        n = (SELECT count(*) FROM memory_history WHERE key = NEW.key),
        floor = (SELECT min(julianday(last_updated)) FROM memory_history
            WHERE key = NEW.key)
        WHERE key = NEW.key AND seq = {guarded};
"""


def _record_and_prune(retention: HistoryRetention) -> str:
    by_age = _by_age(retention) if retention.max_days else ""
    return f"{_by_count(retention)} {_record(retention)} {by_age}"


def _triggers(retention: HistoryRetention) -> list[str]:
    record = _record_and_prune(retention)
    return [
        "DROP TRIGGER IF EXISTS temp.history_on_insert",
        "DROP TRIGGER IF EXISTS temp.history_on_update",
        "CREATE TEMP TRIGGER history_on_insert AFTER INSERT ON memory_objects "
        f"WHEN NEW.operation IS NOT NULL BEGIN {record} END",
        "CREATE TEMP TRIGGER history_on_update AFTER UPDATE ON memory_objects "
        f"WHEN NEW.operation IS NOT NULL BEGIN {record} "
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
        await prepare_pack(connection)
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
    if not rows:
        return None
    return record_from(rows[0], unpack(bytes(rows[0][9]), int(rows[0][4])))
