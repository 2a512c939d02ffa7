"""On SQLite a write's audit event passes through its statement, never rests in the row.

The write holds its event beside the connection under a number, which its
statement stores, and the trigger stages it by that number: each landed write
stages its own event (also within a batch, and after a write that held one and
did not land), the row keeps no event JSON, a write without an event stages
nothing, and an event no statement will take is forgotten.
"""

import json
from pathlib import Path

from app.features.audit.ports import (
    AuditEvent,
    PendingEvent,
    close_pending,
    open_pending,
)
from app.features.memory.ports import Write
from app.infra.sqlite_audit_events import HeldEvents
from app.infra.sqlite_storage import SqliteStorage
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import opened_database, sql
from tests.test_sqlite_edits import CHANGE, META
from tests.test_sqlite_group_commit import batch


def key(name: str) -> str:
    return f"user/alice/notes/{name}.md"


async def write_with(
    storage: SqliteStorage, event: AuditEvent, name: str, expected: str | None
) -> str | None:
    token = open_pending(PendingEvent(lambda: event))
    try:
        write = Write(key(name), b"- [stated] green\n", META, change=CHANGE)
        return await storage.put_if_version(write, expected)
    finally:
        close_pending(token)


def staged(database: Path) -> list[tuple[str, str]]:
    """(event id, version) of every staged event, in staging order."""
    rows = sql(database, "SELECT record, version FROM audit_staged ORDER BY rowid")
    return [(json.loads(record)["id"], version) for record, version in rows]


async def test_each_landed_write_stages_its_own_event_and_the_row_keeps_none(
    tmp_path: Path,
) -> None:
    async with opened_database(tmp_path) as opened:
        storage = opened.storage
        first, lost, second = (staged_write(name) for name in ("a", "a", "a"))
        created = await write_with(storage, first, "a", None)
        # A create over the existing file holds its event and does not land.
        assert await write_with(storage, lost, "a", None) is None
        plain = await storage.put_if_version(Write(key("a"), b"x\n", META), created)
        replaced = await write_with(storage, second, "a", plain)

        assert staged(opened.database) == [(first.id, created), (second.id, replaced)]
        rows = sql(opened.database, "SELECT audit_event FROM memory_objects")
        assert all(event is None or len(event) < 20 for (event,) in rows)


async def test_writes_of_one_batch_stage_their_own_events(tmp_path: Path) -> None:
    async with opened_database(tmp_path) as opened:
        events = [staged_write(name) for name in ("a", "b", "c")]
        writes = [
            write_with(opened.storage, event, name, None)
            for event, name in zip(events, ("a", "b", "c"), strict=True)
        ]

        versions = await batch(opened.group, writes)

        assert staged(opened.database) == [
            (event.id, version) for event, version in zip(events, versions, strict=True)
        ]


def test_events_no_statement_will_take_are_forgotten() -> None:
    held = HeldEvents()
    # Cancelled callers whose statements ran and did not land: never taken.
    stale = [held.hold(f"stale {n}") for n in range(70)]
    taken = held.hold("taken")
    assert held.take(taken) == "taken"
    later = held.hold("later")  # statements queue, and run, in holding order

    assert [held.take(number) for number in stale[:3]] == [None, None, None]
    assert held.take(later) == "later"
