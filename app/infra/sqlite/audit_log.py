"""SQLite audit log: events in the memory database, written by group commit.

Events live in their own table of the same file (its own connection, so an
audit write never waits behind a storage statement in this process). Each
batch is one ``INSERT … SELECT`` statement that also drops events of an entity
erased after they happened, so a purge in one process wins over another
process's buffer. Events that mutations staged (``sqlite_audit_events``, any
process) are moved into the indexed table (``_MOVE``: copied with the same
erasure check, then deleted from the staging table, in one transaction) at
every write of the buffer: within a second of being staged, or at once after
256, and before every query and erasure, so neither misses one. Erasure
writes its marker first, then moves and deletes, each one statement: a crash
between them leaves events a re-run purge removes.
"""

import functools
import json
import sqlite3
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import aiosqlite

from app.features.audit.domain import PURGE
from app.features.audit.domain.marks import erasure_key, stamp
from app.features.audit.domain.pages import page_of
from app.features.audit.ports import (
    AuditEvent,
    AuditPage,
    AuditSelection,
    Position,
    Subject,
)
from app.infra.audit_buffer import BufferedLog
from app.infra.audit_records import event_from_record, event_to_json
from app.infra.sqlite.connection import (
    DEFAULT_SYNCHRONOUS,
    Synchronous,
    fetch_rows,
    open_sqlite_connection,
    translate_sqlite_error,
)

SWEEP_INTERVAL_SECONDS = 60.0

AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_events (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    scope TEXT,
    entity_id TEXT,
    operation TEXT NOT NULL,
    area TEXT,
    name TEXT,
    record TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_events_by_subject
    ON audit_events (scope, entity_id, at, id);
CREATE INDEX IF NOT EXISTS audit_events_by_time ON audit_events (at);
CREATE TABLE IF NOT EXISTS audit_erasures (
    subject TEXT PRIMARY KEY,
    erased_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit_staged (
    record TEXT NOT NULL,
    version TEXT
);
"""
_MOVE = """
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO audit_events
    (id, at, scope, entity_id, operation, area, name, record)
SELECT json_extract(r, '$.id'), json_extract(r, '$.at'),
    json_extract(r, '$.scope'), json_extract(r, '$.entity_id'),
    json_extract(r, '$.operation'), json_extract(r, '$.area'),
    json_extract(r, '$.name'),
    json_set(json_remove(r, '$.subject'), '$.version', v)
FROM (SELECT record AS r, version AS v FROM audit_staged)
WHERE NOT EXISTS (
    SELECT 1 FROM audit_erasures AS e
    WHERE e.subject = json_extract(r, '$.subject')
      AND e.erased_at >= json_extract(r, '$.at')
);
DELETE FROM audit_staged;
COMMIT;
"""
"""Moves every staged event, as one transaction run in one trip (no statement
of another task of this connection between them): the write lock held from
the copy to the delete, no other connection stages an event in between."""
_ANY_STAGED = "SELECT EXISTS (SELECT 1 FROM audit_staged)"
_INSERT = """
INSERT OR IGNORE INTO audit_events
    (id, at, scope, entity_id, operation, area, name, record)
SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6,
    v.column7, v.column8
FROM (VALUES {rows}) AS v
WHERE v.column1 IS NOT NULL AND (v.column5 = '{purge}' OR NOT EXISTS (
    SELECT 1 FROM audit_erasures AS e
    WHERE e.subject = v.column9 AND e.erased_at >= v.column2
))
"""
_MARK_ERASED = """
INSERT INTO audit_erasures (subject, erased_at) VALUES (?, ?)
ON CONFLICT (subject) DO UPDATE SET
    erased_at = max(erased_at, excluded.erased_at)
"""
_ERASE = "DELETE FROM audit_events WHERE scope = ? AND entity_id = ? AND at <= ?"


_ROW_WIDTH = 9
"""Values of one event's row in ``_INSERT`` (``_row``)."""
PAD_STEP = 32
"""Batches are padded to a multiple of this many rows (empty ones, never
inserted), so the few statement texts stay cached: compiling one for a timer
batch of any size costs more than the batch's rows."""
MAX_VARIABLES = 999
"""The fewest variables any SQLite build lets a statement bind (before 3.32)."""
CHUNK_ROWS = MAX_VARIABLES // _ROW_WIDTH // PAD_STEP * PAD_STEP
"""Events per INSERT (96): padded, a chunk never binds more than MAX_VARIABLES."""


def _padded(count: int) -> int:
    return -(-count // PAD_STEP) * PAD_STEP


@functools.lru_cache(maxsize=64)
def _insert_of(rows: int) -> str:
    # A list joined, not a generator: no Python step per row.
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)
    return _INSERT.format(rows=values, purge=PURGE)


def _row(event: AuditEvent) -> tuple[str | None, ...]:
    at = stamp(event.at)
    return (
        event.id,
        at,
        event.scope,
        event.entity_id,
        event.operation,
        event.area,
        event.name,
        event_to_json(event, at=at),
        erasure_key(event.scope, event.entity_id),
    )


def _exact(selection: AuditSelection) -> list[tuple[str, str]]:
    wanted = {
        "operation": selection.operation,
        "area": selection.area,
        "name": selection.name,
    }
    return [(column, value) for column, value in wanted.items() if value is not None]


def _where(
    selection: AuditSelection, floor: datetime, before: Position | None
) -> tuple[str, list[object]]:
    subjects = " OR ".join("(scope = ? AND entity_id = ?)" for _ in selection.subjects)
    clauses = [f"({subjects})", "at >= ?"]
    values: list[object] = [
        v for s in selection.subjects for v in (s.scope, s.entity_id)
    ]
    values.append(stamp(max(floor, selection.since or floor)))
    if selection.until is not None:
        clauses.append("at <= ?")
        values.append(stamp(selection.until))
    for column, wanted in _exact(selection):
        clauses.append(f"{column} = ?")
        values.append(wanted)
    if before is not None:
        clauses.append("(at < ? OR (at = ? AND id < ?))")
        values += [stamp(before.at), stamp(before.at), before.id]
    return " AND ".join(clauses), values


class SqliteAuditLog(BufferedLog):
    def __init__(self, connection: aiosqlite.Connection, *, max_days: int) -> None:
        super().__init__(self._insert)
        self._db = connection
        self._max_age = timedelta(days=max_days)
        self._swept_at: float | None = None

    async def _rows(self, sql: str, parameters: Sequence[object]) -> list[sqlite3.Row]:
        return await fetch_rows(self._db, sql, parameters)

    def _floor(self) -> datetime:
        return datetime.now(UTC) - self._max_age

    async def _insert(self, events: Sequence[AuditEvent]) -> None:
        # A backlog in one INSERT would pass SQLite's variable limit, be queued
        # again whole and never drain; a chunk that landed before a later one
        # failed comes back with the requeued batch and is ignored (its ids).
        for start in range(0, len(events), CHUNK_ROWS):
            chunk = events[start : start + CHUNK_ROWS]
            values = [value for event in chunk for value in _row(event)]
            rows = _padded(len(chunk))
            values += [None] * ((rows - len(chunk)) * _ROW_WIDTH)
            await self._rows(_insert_of(rows), values)
        await self._move_staged()
        await self._sweep()

    async def _move_staged(self) -> None:
        if not (await self._rows(_ANY_STAGED, ()))[0][0]:
            return
        try:
            await self._db.executescript(_MOVE)
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                await self._db.execute("ROLLBACK")
            raise translate_sqlite_error(exc) from exc

    async def _sweep(self) -> None:
        now = time.monotonic()
        if self._swept_at is not None and now - self._swept_at < SWEEP_INTERVAL_SECONDS:
            return
        self._swept_at = now
        cutoff = stamp(self._floor())
        await self._rows("DELETE FROM audit_events WHERE at < ?", (cutoff,))
        await self._rows("DELETE FROM audit_erasures WHERE erased_at < ?", (cutoff,))

    def staged(self) -> None:
        """A write of this process staged an event: move it with the next batch."""
        self._buffer.poke()

    async def query(
        self, selection: AuditSelection, *, before: Position | None, limit: int
    ) -> AuditPage:
        if not selection.subjects:
            return AuditPage(events=(), next_position=None)
        await self._buffer.flush(force=True)  # and the staged events of any process
        where, values = _where(selection, self._floor(), before)
        rows = await self._rows(
            f"SELECT record FROM audit_events WHERE {where} "
            "ORDER BY at DESC, id DESC LIMIT ?",
            (*values, limit + 1),
        )
        events = [event_from_record(json.loads(row[0])) for row in rows]
        return page_of(events, limit)

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        self._buffer.discard(subject, until=at)
        until = stamp(at)
        key = erasure_key(subject.scope, subject.entity_id)
        await self._rows(_MARK_ERASED, (key, until))
        await self._buffer.flush(force=True)  # staged events of ``subject`` drop
        await self._rows(_ERASE, (subject.scope, subject.entity_id, until))


@asynccontextmanager
async def open_sqlite_audit_log(
    path: str, *, max_days: int, synchronous: Synchronous = DEFAULT_SYNCHRONOUS
) -> AsyncGenerator[SqliteAuditLog]:
    """The log in the database at ``path``; buffered events are written on exit."""
    async with open_sqlite_connection(
        path, schema=AUDIT_SCHEMA, synchronous=synchronous
    ) as connection:
        log = SqliteAuditLog(connection, max_days=max_days)
        try:
            yield log
        finally:
            await log.close()
