"""SQLite version history: the record each landed mutation adds, and its reads.

A mutation that carries a change adds its record (``HistoryRecorder``) in the
write's own transaction, right after its statement landed (``sqlite_writes``),
so a record exists exactly when its mutation committed; a recorded delete
records a tombstone. The same step prunes the key's history to the retention
this process was opened with (at most ``PRUNE_PER_WRITE`` rows per limit and
write, never the newest).
The table, clustered by key, is ``sqlite_history_table``'s; how a record keeps
long content, ``sqlite_history_pack``'s.
``history_page`` and ``history_version`` read the records back.
"""

import sqlite3

import aiosqlite

from app.features.memory.ports import HistoryRetention, VersionRecord
from app.infra.history_records import PRUNE_PER_WRITE
from app.infra.sqlite.connection import fetch_rows, translate_sqlite_error
from app.infra.sqlite.history_pack import unpack
from app.infra.sqlite.history_table import prepare_history_table
from app.infra.sqlite.rows import record_from

type Entry = tuple[str, str, str, int, int, str, str, str, str, bytes]
"""A record's columns: version, operation, actor, deleted, size, description,
aliases, sources, last_updated, data."""

OBJECTS_TABLE = """
CREATE TABLE IF NOT EXISTS memory_objects (
    key TEXT PRIMARY KEY,
    data BLOB NOT NULL,
    description TEXT NOT NULL,
    aliases TEXT NOT NULL,
    sources TEXT NOT NULL,
    last_updated TEXT NOT NULL,
    version TEXT NOT NULL,
    expires_at TEXT
) WITHOUT ROWID
"""
EXPIRING_INDEX = """
CREATE INDEX IF NOT EXISTS memory_objects_expiring
ON memory_objects (key, expires_at) WHERE expires_at IS NOT NULL
"""
"""Only the files that expire: a conditional index reads their moments per
revalidation (``SqliteStorage.expiry_moments``) without a scan of the rest."""
# A database made before 2026-12 has more columns in ``memory_objects``
# (operation, actor, changed_at, tombstone, audit_event: what its triggers
# copied); nullable or defaulted, they stay unused.
RECORD_COLUMNS = (
    "version, operation, actor, deleted, size, description, aliases, sources, "
    "last_updated"
)
_NEWEST = """
SELECT seq, n, floor, floor < julianday(?) - ? FROM (
    SELECT seq, n, min(coalesce(floor, julianday(?)), coalesce(julianday(?), floor))
        AS floor
    FROM memory_history WHERE key = ? ORDER BY seq DESC LIMIT 1)
"""
"""The key's newest record: its seq and count, the floor the new record gets,
and whether that floor is past the age limit (one seek from the end of the run).
Parameters: changed_at, max_days, last_updated, last_updated, key."""
_BY_COUNT = """
DELETE FROM memory_history WHERE key = ? AND seq <= (SELECT max(seq) FROM
    (SELECT seq FROM memory_history WHERE key = ? ORDER BY seq LIMIT ?))
"""
"""Parameters: key, key, how many of its oldest records go."""
_INSERT = """
INSERT INTO memory_history (key, seq, n, floor, version, operation, actor,
    deleted, size, description, aliases, sources, last_updated, data)
VALUES (?, ?, ?, coalesce(?, julianday(?)), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
"""Parameters: key, seq, n, floor (None: the record's date, last_updated), then
the ``Entry``."""
_OLD = "julianday(last_updated) < julianday(:changed_at) - :max_days"
_BY_AGE = f"""
DELETE FROM memory_history WHERE key = :key AND seq <= (SELECT max(seq) FROM
    (SELECT seq FROM memory_history WHERE key = :key AND seq < :seq AND {_OLD}
     ORDER BY seq LIMIT {PRUNE_PER_WRITE})) AND {_OLD}
"""
_RECOUNT = """
UPDATE memory_history SET
    n = (SELECT count(*) FROM memory_history WHERE key = :key),
    floor = (SELECT min(julianday(last_updated)) FROM memory_history WHERE key = :key)
WHERE key = :key AND seq = :seq
"""


class HistoryRecorder:
    """Records one landed change of a key and prunes the key to its retention.

    Each record carries its key's record count ``n`` and a ``floor`` no later
    than any of the key's records' dates, carried on from the newest record:
    no write counts or scans the key's records to know how many it has or how
    old the oldest may be. Count pruning runs before the insert, so the pages
    it frees (a long body's overflow pages) are reused by that insert; age
    pruning after it (never the newest), and only when the floor says some
    record is past the limit, after which ``n`` and ``floor`` are counted afresh.
    """

    __slots__ = ("_keep", "_max_days")

    def __init__(self, retention: HistoryRetention) -> None:
        self._keep, self._max_days = retention.max_versions, retention.max_days

    def record(
        self, db: sqlite3.Cursor, key: str, entry: Entry, changed_at: str
    ) -> None:
        """Add the record ``entry`` of ``key`` made at ``changed_at`` inside the
        change's transaction, then prune."""
        last_updated = entry[8]
        newest = db.execute(
            _NEWEST, (changed_at, self._max_days, last_updated, last_updated, key)
        ).fetchone()
        seq, n, floor, old = 1, 1, None, False
        if newest is not None:
            seq, n, floor, past = newest
            doomed = max(0, min(PRUNE_PER_WRITE, n - (self._keep - 1)))
            if doomed:
                db.execute(_BY_COUNT, (key, key, doomed))
            seq, n = seq + 1, n - doomed + 1
            old = bool(self._max_days and past)
        db.execute(_INSERT, (key, seq, n, floor, last_updated, *entry))
        if old:
            prune = {
                "key": key,
                "seq": seq,
                "changed_at": changed_at,
                "max_days": self._max_days,
            }
            db.execute(_BY_AGE, prune)
            db.execute(_RECOUNT, prune)


async def prepare_history(connection: aiosqlite.Connection) -> None:
    """Add the history table when missing (or move an older layout into it),
    and the ``expires_at`` column and its index to a database made before
    files could expire."""
    try:
        columns = await fetch_rows(connection, "PRAGMA table_info(memory_objects)", ())
        if all(column[1] != "expires_at" for column in columns):
            await connection.execute(
                "ALTER TABLE memory_objects ADD COLUMN expires_at TEXT"
            )
            await connection.commit()
        await connection.execute(EXPIRING_INDEX)
        await connection.commit()
        await prepare_history_table(connection)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


async def history_page(
    connection: aiosqlite.Connection, key: str, *, after: str | None, limit: int
) -> list[VersionRecord]:
    """Up to ``limit`` records of ``key``, newest first, older than ``after``."""
    parameters: tuple[str | int, ...]
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
