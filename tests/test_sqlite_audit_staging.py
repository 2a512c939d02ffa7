"""On SQLite a write carrying its call's audit event stages it in its own transaction.

Each landed write stages the event its ``Change`` carries, with the version it
wrote (also within a batch, and after a write that carried one and did not
land); a write without an event stages nothing; a call's event is staged once.
"""

import json
from pathlib import Path

from app.features.audit.ports import AuditEvent, PendingEvent
from app.features.memory.ports import Change, Write
from app.infra.sqlite.storage import SqliteStorage
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import opened_database, sql
from tests.test_sqlite_edits import CHANGE, META
from tests.test_sqlite_group_commit import batch


def key(name: str) -> str:
    return f"user/alice/notes/{name}.md"


async def write_with(
    storage: SqliteStorage,
    event: AuditEvent | PendingEvent,
    name: str,
    expected: str | None,
) -> str | None:
    pending = event if isinstance(event, PendingEvent) else PendingEvent(lambda: event)
    change = Change(CHANGE.operation, CHANGE.actor, CHANGE.at, event=pending)
    write = Write(key(name), b"- [stated] green\n", META, change=change)
    return await storage.put_if_version(write, expected)


def staged(database: Path) -> list[tuple[str, str]]:
    """(event id, version) of every staged event, in staging order."""
    rows = sql(database, "SELECT record, version FROM audit_staged ORDER BY rowid")
    return [(json.loads(record)["id"], version) for record, version in rows]


async def test_each_landed_write_stages_its_own_event(tmp_path: Path) -> None:
    async with opened_database(tmp_path) as opened:
        storage = opened.storage
        first, lost, second = (staged_write(name) for name in ("a", "a", "a"))
        created = await write_with(storage, first, "a", None)
        # A create over the existing file carries its event and does not land.
        assert await write_with(storage, lost, "a", None) is None
        plain = await storage.put_if_version(Write(key("a"), b"x\n", META), created)
        replaced = await write_with(storage, second, "a", plain)
        assert replaced is not None
        assert await storage.delete_if_version(key("a"), replaced, change=CHANGE)

        assert staged(opened.database) == [(first.id, created), (second.id, replaced)]
        assert len(opened.staged) == 2


async def test_a_calls_event_is_staged_once_and_settled(tmp_path: Path) -> None:
    async with opened_database(tmp_path) as opened:
        event = staged_write("a")
        pending = PendingEvent(lambda: event)
        assert await write_with(opened.storage, pending, "a", "none yet") is None
        assert not pending.committed  # a write that did not land leaves it open
        created = await write_with(opened.storage, pending, "a", None)
        assert pending.committed
        # Another write of the same call lands without a second event.
        assert await write_with(opened.storage, pending, "a", created) is not None

        assert staged(opened.database) == [(event.id, created)]


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
