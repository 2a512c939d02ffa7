"""Audit events that commit inside the SQLite write statement of their mutation.

When the audit log lives in the storage database, a mutation's write carries
its call's event in the row's ``audit_event`` column, and per-connection
triggers copy it into ``audit_events`` — with the version the statement wrote
(a delete: the version it removed) — within the very statement that changed
the row. So a change commits exactly when its event does: no crash between
them, and no second commit. An event of an entity erased after it happened is
dropped, as the log's own writes drop it. A row keeps the JSON of its last
event (the ids make a stray re-fire a no-op), never content.
"""

import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiosqlite

from app.features.audit.domain import erasure_key
from app.features.audit.ports import AuditEvent, pending_event

from .audit_records import event_to_json
from .sqlite_audit_log import AUDIT_SCHEMA
from .sqlite_connection import translate_sqlite_error


def _copy(version: str) -> str:
    return f"""
    INSERT OR IGNORE INTO audit_events
        (id, at, scope, entity_id, operation, area, name, record)
    SELECT json_extract(r, '$.id'), json_extract(r, '$.at'),
        json_extract(r, '$.scope'), json_extract(r, '$.entity_id'),
        json_extract(r, '$.operation'), json_extract(r, '$.area'),
        json_extract(r, '$.name'),
        json_set(json_remove(r, '$.subject'), '$.version', {version})
    FROM (SELECT NEW.audit_event AS r)
    WHERE NOT EXISTS (
        SELECT 1 FROM audit_erasures AS e
        WHERE e.subject = json_extract(r, '$.subject')
          AND e.erased_at >= json_extract(r, '$.at')
    );
"""


_TRIGGERS = [
    "DROP TRIGGER IF EXISTS temp.audit_on_insert",
    "DROP TRIGGER IF EXISTS temp.audit_on_update",
    "CREATE TEMP TRIGGER audit_on_insert AFTER INSERT ON memory_objects "
    f"WHEN NEW.audit_event IS NOT NULL BEGIN {_copy('NEW.version')} END",
    "CREATE TEMP TRIGGER audit_on_update AFTER UPDATE ON memory_objects "
    "WHEN NEW.audit_event IS NOT NULL BEGIN "
    f"{_copy('CASE NEW.tombstone WHEN 1 THEN OLD.version ELSE NEW.version END')} END",
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


def _column(event: AuditEvent) -> str:
    return event_to_json(event, subject=erasure_key(event.scope, event.entity_id))


type Run = Callable[[str, Sequence[Any]], Awaitable[aiosqlite.Cursor]]


async def write_with_event(
    run: Run, sql: str, values: Callable[[str | None], Sequence[Any]], *, offer: bool
) -> bool:
    """Run one write statement; True if it changed a row.

    With ``offer``, the current call's pending event (if still unwritten) is
    the statement's ``audit_event`` value, given to ``values``; the event is
    written exactly when the statement lands.
    """
    pending = pending_event() if offer else None
    event = pending.claim() if pending is not None else None
    landed = False
    try:
        cursor = await run(sql, values(_column(event) if event else None))
        landed = cursor.rowcount == 1
    finally:
        if pending is not None and event is not None:
            pending.settle(landed=landed)
    return landed
