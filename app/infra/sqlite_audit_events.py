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

The event's JSON never rests in the row: ``write_with_event`` holds it beside
the connection (``HeldEvents``) under a number, which is all the statement
stores (its ``audit_event`` parameter); the trigger takes the event back by that
number. A row of ~400 bytes less keeps a file of up to ~900 bytes off an
overflow page, whose reallocation on every write also rewrote the free list and
page 1. Held before the statement, not by a SQL function inside it: each call
from inside a statement re-takes the GIL.
"""

import asyncio
import itertools
import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence

import aiosqlite

from app.features.audit.domain.marks import erasure_key
from app.features.audit.ports import AuditEvent, pending_event

from .audit_records import event_to_json
from .sqlite_audit_log import AUDIT_SCHEMA
from .sqlite_connection import translate_sqlite_error

_TAKE = "wenchang_take_event"
_STALE_AFTER = 64
"""Held events past which a hold looks for ones no statement will take."""


class HeldEvents:
    """The events of this connection's queued write statements, by number.

    Numbers are held in the order the statements queue, and they run in that
    order, so an event held before the last one taken will never be taken.
    """

    __slots__ = ("_events", "_last", "_numbers")

    def __init__(self) -> None:
        self._events: dict[str, str] = {}
        self._numbers = itertools.count(1)
        self._last = "0"

    def hold(self, event: str) -> str:
        """The number naming ``event`` (a string: the column's TEXT affinity
        would make a number one)."""
        if len(self._events) > _STALE_AFTER:
            # A cancelled caller's statement ran without landing: its event stays.
            last = int(self._last) if self._last.isdigit() else 0
            for number in [n for n in self._events if int(n) < last]:
                del self._events[number]
        number = str(next(self._numbers))
        self._events[number] = event
        return number

    def take(self, number: str) -> str | None:
        """The event held as ``number`` (the NOT NULL column refuses a write
        whose event went missing)."""
        self._last = number
        return self._events.pop(number, None)

    def release(self, number: str) -> None:
        """Forget ``number``'s event once its statement ran (landed or not)."""
        self._events.pop(number, None)


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


async def install_audit_triggers(
    connection: aiosqlite.Connection, path: str
) -> HeldEvents | None:
    """Commit audit events with this connection's writes, if ``path`` is its database.

    The events its write statements hold; None (nothing installed) when the
    log lives in another file.
    """
    held = HeldEvents()
    try:
        rows = await connection.execute_fetchall("PRAGMA database_list")
        main = next((row[2] for row in rows if row[1] == "main"), "")
        if not main or os.path.realpath(main) != os.path.realpath(path):
            return None
        await connection.executescript(AUDIT_SCHEMA)
        # Not deterministic: evaluated where written, per row, never hoisted.
        await connection.create_function(_TAKE, 1, held.take)  # pyright: ignore[reportUnknownMemberType]
        for statement in _TRIGGERS:
            await connection.execute(statement)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
    return held


def staged_record(event: AuditEvent) -> str:
    """The JSON a write stages: the record plus its erasure subject."""
    return event_to_json(event, subject=erasure_key(event.scope, event.entity_id))


type Run = Callable[[str, Sequence[object]], Awaitable[int]]
"""Runs one write statement; the number of rows it changed."""
type Staged = Callable[[], None]
"""Told each time a write statement staged an event (the log moves them later)."""


async def write_with_event(
    run: Run,
    sql: str,
    values: Callable[[str | None], Sequence[object]],
    staged: Staged | None,
    held: HeldEvents,
) -> bool:
    """Run one write statement; True if it changed a row.

    With ``staged`` (the log shares this database and the write is a change),
    the current call's pending event (if still unwritten) is held and its
    number is the statement's ``audit_event`` value, given to ``values``; the
    event is staged exactly when the statement lands, and ``staged`` is then
    called.
    """
    pending = pending_event() if staged is not None else None
    event = pending.claim() if pending is not None else None
    number = held.hold(staged_record(event)) if event is not None else None
    landed = False
    try:
        landed = await run(sql, values(number)) == 1
    except asyncio.CancelledError:
        number = None  # still queued: its statement runs and takes its event
        raise
    finally:
        if number is not None:
            held.release(number)
        if pending is not None and event is not None:
            pending.settle(landed=landed)
    if landed and event is not None and staged is not None:
        staged()
    return landed
