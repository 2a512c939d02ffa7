"""SQLite edits in place: the read, the edit and the guarded write in one job.

Real database files, no mock. An edit holds the write lock from its read to its
write (no other process can write in between), lands with its history record,
change marker and audit event, and one that raises leaves nothing behind and
does not disturb the writes batched with it.
"""

import sqlite3
from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.features.audit.ports import PendingEvent
from app.features.memory.ports import (
    Change,
    Edit,
    FileMetadata,
    HistoryRetention,
    StoredObject,
    Write,
)
from app.infra.sqlite.change_log import ChangeLog
from app.infra.sqlite.history import HistoryRecorder
from app.infra.sqlite.rows import written_values
from app.infra.sqlite.storage import SqliteStorage
from app.infra.sqlite.writes import Landing
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import Opened, opened_database, sql
from tests.test_sqlite_group_commit import batch

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
CHANGE = Change("append_line", "http", AT)
KEY = "user/alice/notes/tea.md"


class Refused(Exception):
    """What a test's edit raises to refuse."""


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncGenerator[Opened]:
    async with opened_database(tmp_path) as found:
        yield found


def appending(line: bytes, seen: list[StoredObject | None] | None = None) -> Edit:
    def edit(stored: StoredObject | None) -> Write:
        if seen is not None:
            seen.append(stored)
        if stored is None:
            raise Refused("absent")
        return Write(KEY, stored.data + line, META, change=CHANGE)

    return edit


async def edit_with_event(
    storage: SqliteStorage, edit: Edit
) -> tuple[Write, str | None]:
    """``edit``, its write carrying its call's audit event as a use case's does."""
    event = PendingEvent(lambda: staged_write("tea"))

    def carrying(stored: StoredObject | None) -> Write:
        write = edit(stored)
        assert write.change is not None
        return replace(write, change=replace(write.change, event=event))

    return await storage.edit_in_place(KEY, carrying)


def audit_rows(database: Path) -> list[str]:
    return [version for (version,) in sql(database, "SELECT version FROM audit_staged")]


async def test_an_edit_lands_with_its_history_marker_and_event(opened: Opened) -> None:
    first = await opened.storage.put_if_version(Write(KEY, b"a\n", META), None)
    assert first is not None
    marker = await opened.markers.read("user/alice/")
    seen: list[StoredObject | None] = []

    write, version = await edit_with_event(opened.storage, appending(b"b\n", seen))

    assert version is not None and write.data == b"a\nb\n"
    assert [stored.version for stored in seen if stored] == [first]
    stored = await opened.storage.get(KEY)
    assert stored is not None and (stored.data, stored.version) == (b"a\nb\n", version)
    history = await opened.storage.list_versions(KEY, after=None, limit=5)
    assert [record.version for record in history] == [version]
    assert await opened.markers.read("user/alice/") != marker
    assert audit_rows(opened.database) == [version] and opened.staged == [1]


async def test_an_edit_holds_the_write_lock_from_its_read_to_its_write(
    opened: Opened,
) -> None:
    assert await opened.storage.put_if_version(Write(KEY, b"a\n", META), None)
    refused: list[str] = []

    def edit(stored: StoredObject | None) -> Write:
        # Another process trying to write now must wait: it is refused at once.
        other = sqlite3.connect(opened.database, isolation_level=None, timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            refused.append(str(exc))
        finally:
            other.close()
        assert stored is not None
        return Write(KEY, stored.data + b"b\n", META, change=CHANGE)

    _, version = await opened.storage.edit_in_place(KEY, edit)

    assert version is not None
    assert refused == ["database is locked"]


async def test_a_refused_edit_leaves_nothing_and_its_batch_lands(
    opened: Opened,
) -> None:
    assert await opened.storage.put_if_version(Write(KEY, b"a\n", META), None)
    other = "user/bob/notes/tea.md"

    def refuse(stored: StoredObject | None) -> Write:
        raise Refused("no")

    results = await batch(
        opened.storage.group_commit,
        [
            edit_with_event(opened.storage, refuse),
            opened.storage.put_if_version(
                Write(other, b"x", META, change=CHANGE), None
            ),
        ],
    )

    assert isinstance(results[0], Refused) and isinstance(results[1], str)
    stored = await opened.storage.get(KEY)
    assert stored is not None and stored.data == b"a\n"
    assert await opened.storage.list_versions(KEY, after=None, limit=5) == []
    assert audit_rows(opened.database) == [] and opened.staged == []


async def test_an_edit_in_a_batch_reads_the_writes_queued_before_it(
    opened: Opened,
) -> None:
    first = await opened.storage.put_if_version(Write(KEY, b"a\n", META), None)
    assert first is not None

    results = await batch(
        opened.storage.group_commit,
        [
            opened.storage.put_if_version(Write(KEY, b"b\n", META), first),
            opened.storage.edit_in_place(KEY, appending(b"c\n")),
        ],
    )

    assert isinstance(results[0], str)
    edited = results[1]
    assert isinstance(edited, tuple) and edited[1] is not None
    stored = await opened.storage.get(KEY)
    assert stored is not None and stored.data == b"b\nc\n"


async def test_an_edit_of_an_absent_key_sees_none(opened: Opened) -> None:
    seen: list[StoredObject | None] = []

    with pytest.raises(Refused):
        await opened.storage.edit_in_place(KEY, appending(b"a\n", seen))

    assert seen == [None] and await opened.storage.get(KEY) is None


async def test_a_lone_job_that_raises_after_writing_leaves_nothing(
    opened: Opened,
) -> None:
    """Alone in its batch a job has no savepoint: its transaction is rolled back."""
    first = await opened.storage.put_if_version(Write(KEY, b"a\n", META), None)
    assert first is not None
    transactions = opened.storage.group_commit.transactions
    marker = await opened.markers.read("user/alice/")

    landing = Landing(HistoryRecorder(HistoryRetention()), ChangeLog(timedelta(days=7)))

    def job(db: sqlite3.Cursor) -> int:
        # A recorded change with all that lands with it: history, the marker.
        db.execute(
            "UPDATE memory_objects SET data = X'00', version = 'v' WHERE key = ?",
            (KEY,),
        )
        write = Write(KEY, b"\0", META, change=CHANGE)
        landing.written(db, write, "v", written_values(write, "v")[0])
        raise Refused("after writing")

    with pytest.raises(Refused):
        await opened.storage.group_commit.run(job)

    assert opened.storage.group_commit.transactions == transactions + 1
    stored = await opened.storage.get(KEY)
    assert stored is not None and (stored.data, stored.version) == (b"a\n", first)
    assert await opened.storage.list_versions(KEY, after=None, limit=5) == []
    assert await opened.markers.read("user/alice/") == marker
    _, version = await edit_with_event(opened.storage, appending(b"b\n"))
    assert version is not None and audit_rows(opened.database) == [version]


async def test_an_edit_of_an_absent_key_can_create_it(opened: Opened) -> None:
    def create(stored: StoredObject | None) -> Write:
        assert stored is None
        return Write(KEY, b"a\n", META, change=CHANGE)

    write, version = await edit_with_event(opened.storage, create)

    assert version is not None and write.data == b"a\n"
    stored = await opened.storage.get(KEY)
    assert stored is not None and (stored.data, stored.version) == (b"a\n", version)
    history = await opened.storage.list_versions(KEY, after=None, limit=5)
    assert [record.version for record in history] == [version]
    assert audit_rows(opened.database) == [version] and opened.staged == [1]


async def test_a_recorded_delete_stages_its_event_with_the_version_it_removed(
    opened: Opened,
) -> None:
    version = await opened.storage.put_if_version(Write(KEY, b"a\n", META), None)
    assert version is not None
    event = PendingEvent(lambda: staged_write("tea"))
    change = Change("delete", "http", AT + timedelta(hours=1), event=event)

    assert await opened.storage.delete_if_version(KEY, version, change=change)

    assert audit_rows(opened.database) == [version] and opened.staged == [1]
    history = await opened.storage.list_versions(KEY, after=None, limit=5)
    assert [(record.deleted, record.operation) for record in history] == [
        (True, "delete")
    ]
