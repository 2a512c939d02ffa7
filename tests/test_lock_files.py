"""The lock files of the filesystem storage, its audit log and the token file:
who waits for whom (another process's hold, shown by a second open file
description, which ``flock`` treats as another holder), and each file's mode."""

import asyncio
import fcntl
import os
import threading
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import AuditSelection
from app.features.memory.ports import FileMetadata, Write
from app.infra.filesystem import lock
from app.infra.filesystem.audit_log import FileAuditLog
from app.infra.filesystem.storage import FilesystemStorage
from app.infra.tokens.token_file import create_token, read_token_file
from app.shared.identity import Grant
from tests.support.audit_events import ALICE, event

KEY = "user/alice/notes/tea.md"
META = FileMetadata("Tea", (), ("http",), datetime(2026, 1, 2, tzinfo=UTC))
OWNER = {"user": Grant(entity_id="alice", role="owner")}
WAITING_SECONDS = 0.2
BOUND_SECONDS = 30.0
EVERYONE = AuditSelection(subjects=(ALICE,))


def recent() -> datetime:
    return datetime.now(UTC) - timedelta(minutes=5)


@contextmanager
def held(path: Path, operation: int) -> Generator[None]:
    """Another process's ``flock(operation)`` on ``path``."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(descriptor, operation)
    try:
        yield
    finally:
        os.close(descriptor)


def created_mode(path: Path, mode: int) -> int:
    """The permission bits a file created with ``mode`` gets under this umask."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode))
    return path.stat().st_mode & 0o777


async def test_the_storage_lock_file_is_made_rw_for_its_owner_r_for_others(
    tmp_path: Path,
) -> None:
    await FilesystemStorage(tmp_path).put(Write(KEY, b"x", META))

    mode = (tmp_path / ".lock").stat().st_mode & 0o777
    assert mode == created_mode(tmp_path / "probe", 0o644)  # umask applied


async def test_readers_share_the_storage_lock_and_a_writer_waits_for_them(
    tmp_path: Path,
) -> None:
    """A read goes ahead under another reader's hold; a write waits for it."""
    storage = FilesystemStorage(tmp_path, lock_timeout=BOUND_SECONDS)
    await storage.put(Write(KEY, b"x", META))

    with held(tmp_path / ".lock", fcntl.LOCK_SH):
        stored = await FilesystemStorage(tmp_path, lock_timeout=0.5).get(KEY)
        assert stored is not None and stored.data == b"x"
        writing = asyncio.create_task(storage.put(Write(KEY, b"y", META)))
        await asyncio.sleep(WAITING_SECONDS)
        assert not writing.done()

    await writing
    stored = await storage.get(KEY)
    assert stored is not None and stored.data == b"y"


async def test_a_reader_holds_the_storage_lock_until_it_has_read(
    tmp_path: Path,
) -> None:
    """Another writer's exclusive hold makes a read time out, never read past it."""
    storage = FilesystemStorage(tmp_path, lock_timeout=0.1)
    await storage.put(Write(KEY, b"x", META))

    with held(tmp_path / ".lock", fcntl.LOCK_EX), pytest.raises(AppError) as raised:
        await storage.get(KEY)

    assert raised.value.details["reason"] == "timeout"


async def test_the_audit_log_makes_its_directories_and_a_private_lock_file(
    tmp_path: Path,
) -> None:
    root = tmp_path / "audit" / "logs"
    log = FileAuditLog(root, max_days=30)

    await log.record([event(at=recent())], durable=True)

    assert (root / ".lock").stat().st_mode & 0o777 == created_mode(
        tmp_path / "probe", 0o600
    )
    assert len((await log.query(EVERYONE, before=None, limit=10)).events) == 1


async def test_an_audit_log_write_waits_for_another_process_s_lock(
    tmp_path: Path,
) -> None:
    root = tmp_path / "audit"
    root.mkdir()
    log = FileAuditLog(root, max_days=30)

    with held(root / ".lock", fcntl.LOCK_EX):
        recording = asyncio.create_task(log.record([event(at=recent())], durable=True))
        await asyncio.sleep(WAITING_SECONDS)
        assert not recording.done()
        assert [p.name for p in root.iterdir()] == [".lock"]

    await recording
    assert len((await log.query(EVERYONE, before=None, limit=10)).events) == 1


def test_a_token_write_waits_for_another_process_s_hold_of_the_lock(
    tmp_path: Path,
) -> None:
    """The lock is ``.NAME.lock`` beside the file, made with its directories."""
    path = tmp_path / "config" / "wenchang" / "tokens.json"
    create_token(path, OWNER)
    lock = path.with_name(".tokens.json.lock")
    assert lock.exists()

    with held(lock, fcntl.LOCK_EX):
        writer = threading.Thread(target=create_token, args=(path, OWNER))
        writer.start()
        writer.join(WAITING_SECONDS)
        assert writer.is_alive()
        assert len(read_token_file(path).tokens) == 1

    writer.join(BOUND_SECONDS)
    assert not writer.is_alive()
    assert len(read_token_file(path).tokens) == 2


class Clock:
    """``time`` for the lock module: ``sleep`` moves ``monotonic`` on at once."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert len(self.slept) < 100, "polled as if for ever"
        self.slept.append(seconds)
        self.now += seconds


def test_a_held_lock_is_polled_from_1_ms_doubling_to_50_ms_until_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poll schedule, on a clock of its own; the timeout is met exactly at
    the deadline (the seven polls before it sum to the timeout)."""
    clock = Clock()
    monkeypatch.setattr(lock, "time", clock)
    schedule = [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.05]
    timeout = 0.0
    for delay in schedule:
        timeout += delay

    with (
        held(tmp_path / ".lock", fcntl.LOCK_EX),
        pytest.raises(TimeoutError, match=r"^storage lock held too long$"),
        lock.storage_lock(tmp_path / ".lock", fcntl.LOCK_SH, timeout),
    ):
        pass

    assert clock.slept == schedule
