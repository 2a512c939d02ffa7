"""Audit events that commit inside the SQLite write statement of their mutation.

When the audit log lives in the storage database, a mutation's write carries
its call's event in the row's ``audit_event`` column, and per-connection
triggers append it — with the version the statement wrote (a delete: the
version it removed) — to ``audit_staged`` within the very statement that
changed the row. So a change commits exactly when its event does: no crash
between them, and no second commit. The staging table has no index, so the
write pays one appended row; the log moves staged events into the indexed
``audit_events`` in batches (``sqlite_audit_log``), and every query, erasure
and shutdown moves them first. A row keeps the JSON of its last event, never
content.
"""

import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiosqlite

from app.features.audit.domain.marks import erasure_key
from app.features.audit.ports import AuditEvent, pending_event

from .audit_records import event_to_json
from .sqlite_audit_log import AUDIT_SCHEMA
from .sqlite_connection import translate_sqlite_error


def _stage(version: str) -> str:
    return (
        "INSERT INTO audit_staged (record, version) "
        f"VALUES (NEW.audit_event, {version});"
    )


_TRIGGERS = [
    "DROP TRIGGER IF EXISTS temp.audit_on_insert",
    "DROP TRIGGER IF EXISTS temp.audit_on_update",
    "CREATE TEMP TRIGGER audit_on_insert AFTER INSERT ON memory_objects "
    f"WHEN NEW.audit_event IS NOT NULL BEGIN {_stage('NEW.version')} END",
    "CREATE TEMP TRIGGER audit_on_update AFTER UPDATE ON memory_objects "
    "WHEN NEW.audit_event IS NOT NULL BEGIN "
    f"{_stage('CASE NEW.tombstone WHEN 1 THEN OLD.version ELSE NEW.version END')} END",
]


async def install_audit_triggers(connection: aiosqlite.Connection, path: str) -> bool:
    """Commit audit events with this connection's writes, if ``path`` is its database.

    False (nothing installed) when the log lives in another file.
    """
    try:
        rows = await connection.execute_fetchall("PRAGMA database_list")
        main = next((row[2] for row in rows if row[1] == "main"), "")
        if not main or os.path.realpath(main) != os.path.realpath(path):
            return False
        await connection.executescript(AUDIT_SCHEMA)
        for statement in _TRIGGERS:
            await connection.execute(statement)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
    return True


def staged_record(event: AuditEvent) -> str:
    """The JSON a write stages: the record plus its erasure subject."""
    return event_to_json(event, subject=erasure_key(event.scope, event.entity_id))


type Run = Callable[[str, Sequence[Any]], Awaitable[int]]
"""Runs one write statement; the number of rows it changed."""
type Staged = Callable[[], None]
"""Told each time a write statement staged an event (the log moves them later)."""


async def write_with_event(
    run: Run,
    sql: str,
    values: Callable[[str | None], Sequence[Any]],
    *,
    staged: Staged | None,
) -> bool:
    """Run one write statement; True if it changed a row.

    With ``staged`` (the log shares this database and the write is a change),
    the current call's pending event (if still unwritten) is the statement's
    ``audit_event`` value, given to ``values``; the event is staged exactly
    when the statement lands, and ``staged`` is then called.
    """
    pending = pending_event() if staged is not None else None
    event = pending.claim() if pending is not None else None
    landed = False
    try:
        landed = await run(sql, values(staged_record(event) if event else None)) == 1
    finally:
        if pending is not None and event is not None:
            pending.settle(landed=landed)
    if landed and event is not None and staged is not None:
        staged()
    return landed
