"""The SQLite write connection where two things go wrong at once.

A write joined to a batch from an event loop that closed before the batch ran
(a worker shutting down) still lands, and the write that ran the batch is
answered; an unexpected failure (not an ``Exception``) whose rollback fails
too is answered as itself; a checkpoint the write connection cannot run (a
statement of its own still reading) says ``timeout``, as a busy one does, and
so does a write connection kept by another's lock from setting itself up.
"""

import asyncio
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import FileMetadata, Write
from app.infra.sqlite import connection
from app.infra.sqlite.group_commit import GroupCommit, Job, open_group_commit
from app.shared.errors import backend_unavailable
from tests.support.sqlite_file import opened_database

META = FileMetadata("Tea", (), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
TEA = "user/ann/notes/tea.md"


def insert(n: int) -> Job:
    return lambda db: db.execute("INSERT INTO t VALUES (?)", (n,)).rowcount


async def queued(group: GroupCommit, count: int) -> None:
    while group.waiting < count:
        await asyncio.sleep(0)


def join_and_leave(group: GroupCommit) -> None:
    """Another loop joins the waiting batch with a write, then closes."""

    async def join() -> None:
        joined = asyncio.ensure_future(group.run(insert(2)))
        await asyncio.wait_for(queued(group, 2), 10)
        assert not joined.done()
        # returning cancels the write's task and closes this loop

    asyncio.run(join())


async def test_a_write_joined_from_a_loop_that_closed_leaves_the_batch_answered(
    tmp_path: Path,
) -> None:
    async with open_group_commit(str(tmp_path / "w.db"), "normal") as group:
        await group.call(lambda db: db.execute("CREATE TABLE t (n INTEGER)").close())
        started, gate = threading.Event(), threading.Event()

        def hold(_: sqlite3.Connection) -> bool:
            started.set()
            return gate.wait(timeout=60)

        holding = asyncio.ensure_future(group.call(hold))
        await asyncio.to_thread(started.wait, 60)
        first = asyncio.ensure_future(group.run(insert(1)))
        await asyncio.wait_for(queued(group, 1), 10)
        await asyncio.to_thread(join_and_leave, group)
        gate.set()
        await holding

        assert await asyncio.wait_for(first, 10) == 1
        rows = await group.call(
            lambda db: db.execute("SELECT n FROM t ORDER BY n").fetchall()
        )
        assert rows == [(1,), (2,)]  # the closed loop's write landed too


class Unexpected(BaseException):
    """Not an ``Exception``: no savepoint catches it."""


async def test_an_unexpected_failure_whose_rollback_fails_is_answered_as_itself(
    tmp_path: Path,
) -> None:
    def fail(db: sqlite3.Cursor) -> int:
        db.connection.close()  # the rollback after the failure cannot run either
        raise Unexpected

    async with open_group_commit(str(tmp_path / "w.db"), "normal") as group:
        with pytest.raises(Unexpected):
            await asyncio.wait_for(group.run(fail), 10)


async def test_a_checkpoint_the_write_connection_cannot_run_times_out(
    tmp_path: Path,
) -> None:
    """SQLite refuses a checkpoint to a connection with a statement still
    reading ("database table is locked"): a lock, so reason ``timeout``."""
    async with opened_database(tmp_path) as opened:
        storage = opened.storage
        version = await storage.put_if_version(Write(TEA, b"x", META), None)
        assert version is not None
        await storage.put(Write("user/ann/notes/coffee.md", b"y", META))
        reading: list[sqlite3.Cursor] = []

        def start_reading(db: sqlite3.Connection) -> None:
            cursor = db.execute("SELECT key FROM memory_objects")
            cursor.fetchone()
            reading.append(cursor)

        await opened.group.call(start_reading)
        with pytest.raises(AppError) as raised:
            await storage.erase_if_version(TEA, version)
        await opened.group.call(lambda _: reading.pop().close())

        assert raised.value.definition is backend_unavailable
        assert raised.value.details["reason"] == "timeout"
        assert await storage.get(TEA) is None  # the erase landed before it


async def test_a_write_connection_kept_from_its_file_by_a_lock_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its pragmas wait out the busy timeout behind another connection's
    exclusive lock: the lock wait ran out, a ``timeout``."""
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 50)
    database = tmp_path / "w.db"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("CREATE TABLE t (n INTEGER)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(AppError) as raised:
            await asyncio.wait_for(
                open_group_commit(str(database), "full").__aenter__(), timeout=30
            )
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "timeout"
