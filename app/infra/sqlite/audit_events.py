"""Audit events that commit in the SQLite transaction of their mutation.

When the audit log lives in the storage database (``share_audit_log``), a
write carrying its call's event (``Change.event``) appends it — with the
version the write made (a delete: the version it removed) — to
``audit_staged`` in the write's own transaction (``STAGE``, run by
``sqlite_writes``). So a change commits exactly when its event does: no crash
between them, and no second commit. The staging table has no index, so the
write pays one appended row; the log moves staged events into the indexed
``audit_events`` in batches (``sqlite_audit_log``), and every query, erasure
and shutdown moves them first.
"""

import os
import sqlite3
from collections.abc import Callable

import aiosqlite

from app.features.audit.domain.marks import erasure_key
from app.features.audit.ports import AuditEvent
from app.infra.audit_records import event_to_json
from app.infra.sqlite.audit_log import AUDIT_SCHEMA
from app.infra.sqlite.connection import translate_sqlite_error

STAGE = "INSERT INTO audit_staged (record, version) VALUES (?, ?)"
"""Parameters: the event's ``staged_record``, the version its write made."""

type Staged = Callable[[], None]
"""Told each time a write staged an event (the log moves them later)."""


async def shares_database(connection: aiosqlite.Connection, path: str) -> bool:
    """Whether ``path`` is this connection's database; if so, the staging
    table is made ready for its writes."""
    try:
        rows = await connection.execute_fetchall("PRAGMA database_list")
        main = next((row[2] for row in rows if row[1] == "main"), "")
        if not main or os.path.realpath(main) != os.path.realpath(path):
            return False
        await connection.executescript(AUDIT_SCHEMA)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
    return True


def staged_record(event: AuditEvent) -> str:
    """The JSON a write stages: the record plus its erasure subject."""
    return event_to_json(event, subject=erasure_key(event.scope, event.entity_id))
