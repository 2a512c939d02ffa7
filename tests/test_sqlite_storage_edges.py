"""The SQLite storage port at its edges, on a real file: what the conformance
suite leaves to each adapter (the expiry index, a checkpoint that cannot
finish, the audit log kept in another file)."""

import sqlite3
from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import PendingEvent
from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.sqlite.storage import open_sqlite_storage
from app.shared.errors import backend_unavailable
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import Opened, fail_commits, opened_database

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
CHANGE = Change("write_file", "http", AT)
TEA = "user/ann/notes/tea.md"
COFFEE = "user/ann/notes/coffee.md"


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncGenerator[Opened]:
    async with opened_database(tmp_path) as found:
        yield found


def expiring(key: str, day: int) -> Write:
    meta = replace(META, expires_at=datetime(2027, 1, day, 3, 4, 5, 6, tzinfo=UTC))
    return Write(key, b"x", meta, change=CHANGE)


async def test_expiry_moments_read_each_prefix_range_of_the_index(
    opened: Opened,
) -> None:
    """One moment per expiring file under any prefix asked; none for no prefix,
    a file without expiry, or a key outside every range."""
    storage = opened.storage
    await storage.put(expiring("user/ann/notes/a.md", 2))
    await storage.put(expiring("user/ann/notes/b.md", 3))
    await storage.put(expiring("user/bob/notes/a.md", 4))
    await storage.put(expiring("user/bobby/notes/a.md", 5))
    await storage.put(expiring("user/cat/notes/a.md", 6))
    await storage.put(Write("user/bob/notes/c.md", b"y", META, change=CHANGE))

    def days(moments: Sequence[datetime]) -> list[int]:
        return sorted(moment.day for moment in moments)

    assert await storage.expiry_moments([]) == []
    assert days(await storage.expiry_moments(["user/ann/"])) == [2, 3]
    assert days(await storage.expiry_moments(["user/bob/"])) == [4]
    assert days(await storage.expiry_moments(["user/ann/", "user/cat/"])) == [2, 3, 6]
    assert await storage.expiry_moments(["user/dan/"]) == []


def refused_for(raised: pytest.ExceptionInfo[AppError]) -> object:
    assert raised.value.definition is backend_unavailable
    return raised.value.details["reason"]


async def test_an_event_whose_write_fails_at_commit_stays_open(opened: Opened) -> None:
    """The write claimed its event, then its COMMIT failed: the event is not
    settled as landed, and the audit log is told of nothing."""
    await fail_commits(opened)
    event = PendingEvent(lambda: staged_write("tea"))
    change = Change("write_file", "http", AT, event=event)

    with pytest.raises(AppError):
        await opened.storage.put_if_version(Write(TEA, b"x", META, change), None)

    assert not event.committed
    assert opened.staged == []
    assert await opened.storage.get(TEA) is None


async def test_an_audit_log_in_another_file_is_not_shared(tmp_path: Path) -> None:
    async with open_sqlite_storage(str(tmp_path / "memory.db")) as storage:
        other = str(tmp_path / "audit.db")
        assert not await storage.share_audit_log(other, lambda: None)


async def test_listing_after_a_key_equal_to_the_prefix_leaves_it_out(
    opened: Opened,
) -> None:
    storage = opened.storage
    for key in ("a/b", "a/b/c", "a/bc"):
        await storage.put(Write(key, b"x", META))
    listed = await storage.list_page("a/b", start_after="a/b", limit=10)
    assert [item.key for item in listed] == ["a/b/c", "a/bc"]
    listed = await storage.list_page("a/b", start_after="a/a", limit=10)
    assert [item.key for item in listed] == ["a/b", "a/b/c", "a/bc"]


def file_bytes(database: Path) -> bytes:
    wal = database.with_name(database.name + "-wal")
    return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


async def test_an_erased_files_text_leaves_no_byte_in_the_database(
    opened: Opened,
) -> None:
    """The WAL keeps the pages as they were until a checkpoint copies them
    back: an erase checkpoints, so no copy of the text is left."""
    secret = b"erase-me-" + b"7" * 40
    version = await opened.storage.put_if_version(Write(TEA, secret, META), None)
    assert version is not None and secret in file_bytes(opened.database)

    assert await opened.storage.erase_if_version(TEA, version)

    assert secret not in file_bytes(opened.database)


@contextmanager
def reader_holding_a_snapshot(database: Path) -> Generator[None]:
    """Another process in the middle of a read: a checkpoint cannot finish."""
    other = sqlite3.connect(database, isolation_level=None)
    try:
        other.execute("BEGIN")
        other.execute("SELECT count(*) FROM memory_objects").fetchall()
        yield
        other.execute("COMMIT")
    finally:
        other.close()


async def test_an_erase_or_scrub_whose_checkpoint_cannot_finish_times_out(
    opened: Opened,
) -> None:
    storage = opened.storage
    await opened.group.call(lambda db: db.execute("PRAGMA busy_timeout = 0"))
    version = await storage.put_if_version(Write(TEA, b"x", META), None)
    assert version is not None
    await storage.put(Write(COFFEE, b"y", META))

    with reader_holding_a_snapshot(opened.database):
        with pytest.raises(AppError) as erased:
            await storage.erase_if_version(TEA, version)
        with pytest.raises(AppError) as scrubbed:
            await storage.scrub("user/ann/")

    other = sqlite3.connect(opened.database, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process writing
        with pytest.raises(AppError) as locked_out:
            await storage.scrub("user/ann/")
        other.execute("ROLLBACK")
    finally:
        other.close()

    assert refused_for(erased) == "timeout"
    assert refused_for(scrubbed) == "timeout"
    assert refused_for(locked_out) == "timeout"
    await storage.scrub("user/ann/")  # the reader gone, it finishes
    assert await storage.get(TEA) is None  # the erase landed before its checkpoint


async def test_a_lone_write_is_one_transaction_without_a_savepoint(
    opened: Opened,
) -> None:
    """The counter starts at zero and counts transactions; a write alone in its
    batch runs without a savepoint (its ROLLBACK undoes just as much)."""
    statements: list[str] = []
    await opened.group.call(lambda db: db.set_trace_callback(statements.append))
    assert opened.group.transactions == 0

    await opened.storage.put(Write(TEA, b"x", META, change=CHANGE))

    assert opened.group.transactions == 1
    assert statements[0] == "BEGIN IMMEDIATE" and statements[-1] == "COMMIT"
    assert not [s for s in statements if s.upper().startswith("SAVEPOINT")]
