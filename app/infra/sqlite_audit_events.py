"""Audit events that commit inside the SQLite write statement of their mutation.

When the audit log lives in the storage database, a mutation's write carries
its call's event as the value of the row's ``audit_event`` column, and
per-connection triggers append it — with the version the statement wrote (a
delete: the version it removed) — to ``audit_staged`` within the very statement
that changed the row. So a change commits exactly when its event does: no crash
between them, and no second commit. The staging table has no index, so the
write pays one appended row; the log moves staged events into the indexed
``audit_events`` in batches (``sqlite_audit_log``), and every query, erasure
and shutdown moves them first.

The event's JSON never rests in the row: the statement passes it through
``EVENT_VALUE`` (``wenchang_hold_event``), which keeps it beside the connection
and stores only a number naming it; the trigger takes it back by that number.
A row of ~400 bytes less keeps a file of up to ~900 bytes off an overflow page,
whose reallocation on every write also rewrote the free list and page 1.
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

_HOLD, _TAKE = "wenchang_hold_event", "wenchang_take_event"
EVENT_VALUE = f"{_HOLD}(?)"
"""The SQL a write statement gives its ``audit_event`` column: its event's
number while the statement runs (NULL without an event)."""


class _HeldEvent:
    """The event of the statement running on one connection (one at a time)."""

    __slots__ = ("_event", "_number")

    def __init__(self) -> None:
        self._number = 0
        self._event: str | None = None

    def hold(self, event: str | None) -> str | None:
        # A statement that did not land leaves its event here; the next one's
        # replaces it and its number never names another statement's event.
        # (A string: the column's TEXT affinity would make a number one.)
        self._number += 1
        self._event = event
        return None if event is None else str(self._number)

    def take(self, number: str) -> str | None:
        """The held event if ``number`` names it (the NOT NULL column refuses
        a write whose event went missing)."""
        event, self._event = self._event, None
        return event if number == str(self._number) else None


async def prepare_event_hold(connection: aiosqlite.Connection) -> None:
    """Register ``EVENT_VALUE``'s functions (every storage connection needs them)."""
    held = _HeldEvent()
    try:
        # Not deterministic: evaluated where written, per row, never hoisted.
        await connection.create_function(_HOLD, 1, held.hold)  # pyright: ignore[reportUnknownMemberType]
        await connection.create_function(_TAKE, 1, held.take)  # pyright: ignore[reportUnknownMemberType]
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


def _stage(version: str) -> str:
    return (
        "INSERT INTO audit_staged (record, version) "
        f"VALUES ({_TAKE}(NEW.audit_event), {version});"
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
