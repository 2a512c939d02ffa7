"""A filesystem rename cut short by a crash: never both paths, never neither.

The crash is simulated at each durable step of the rename in turn (a
``BaseException`` raised from the adapter's ``sync_directory`` /
``replace_file``, the lock released as a dying process's is); a fresh
storage over the same directory, as the next process, then finds the file at
exactly one path with all its history and a gapless change log, and a
crash before the journal leaves the file where it was.
"""

import asyncio
import contextlib
import fcntl
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.durable_files import replace_file, sync_directory
from app.infra.filesystem import renames
from app.infra.filesystem.storage import FilesystemStorage
from tests.test_lock_files import held

OLD = "user/alice/notes/tea.md"
NEW = "user/alice/projects/chai.md"
AT = datetime(2026, 12, 5, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)


class Crash(BaseException):
    """The process dies here."""


async def seeded(root: Path) -> tuple[FilesystemStorage, list[str]]:
    storage = FilesystemStorage(root)
    first = await storage.put_if_version(
        Write(OLD, b"one\n", META, Change("write_file", "t", AT)), None
    )
    assert first is not None
    second = await storage.put_if_version(
        Write(OLD, b"two\n", META, Change("append_line", "t", AT)), first
    )
    assert second is not None
    return storage, [first, second]


async def crashed_after_the_journal(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename of ``OLD`` to ``NEW`` whose process dies once its journal is written."""
    storage, versions = await seeded(root)

    def crash(*arguments: object) -> None:
        raise Crash

    monkeypatch.setattr(renames, "sync_directory", crash)  # after the journal
    with contextlib.suppress(Crash):
        await storage.rename_if_version(
            OLD, NEW, versions[1], replacing=None, change=Change("rename_file", "t", AT)
        )
    monkeypatch.undo()


@pytest.mark.parametrize("survived", range(12))
async def test_a_rename_crashed_after_any_step_lands_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, survived: int
) -> None:
    storage, versions = await seeded(tmp_path)
    steps = 0

    def step[T](function: T) -> T:
        def crashing(*arguments: object) -> object:
            nonlocal steps
            steps += 1
            if steps > survived:
                raise Crash
            return function(*arguments)  # type: ignore[operator]

        return crashing  # type: ignore[return-value]

    monkeypatch.setattr(renames, "sync_directory", step(sync_directory))
    monkeypatch.setattr(renames, "replace_file", step(replace_file))
    landed: str | None = None
    with contextlib.suppress(Crash):
        landed = await storage.rename_if_version(
            OLD, NEW, versions[1], replacing=None, change=Change("rename_file", "t", AT)
        )
    monkeypatch.undo()

    after = FilesystemStorage(tmp_path)  # the next process
    old, new = await after.get(OLD), await after.get(NEW)
    assert (old is None) != (new is None)
    listed = await after.list_page("user/alice/", start_after=None, limit=10)
    assert [item.key for item in listed] == [OLD if new is None else NEW]
    page = await after.changes_after("user/alice/", 0, now=AT, limit=10)
    if new is None:
        assert old is not None and old.version == versions[1]
        assert len(await after.list_versions(OLD, after=None, limit=10)) == 2
        assert [e.key for e in page.changes] == [OLD, OLD]
        assert landed is None
        return
    assert new.data == b"two\n"
    history = await after.list_versions(NEW, after=None, limit=10)
    assert [r.version for r in history] == [new.version, *versions[::-1]]
    assert await after.list_versions(OLD, after=None, limit=10) == []
    assert [(e.key, e.version) for e in page.changes][2:] == [
        (OLD, new.version),
        (NEW, new.version),
    ]
    base = page.changes[0].seq - 1
    assert [e.seq - base for e in page.changes] == [1, 2, 3, 4]
    assert not (tmp_path / renames.JOURNAL).exists()


async def test_a_reader_that_meets_the_journal_waits_to_finish_it_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read of a crashed rename's journal takes the exclusive lock to finish
    it, so it waits for another process's reading; a read without a journal
    shares the lock with it."""
    await crashed_after_the_journal(tmp_path, monkeypatch)
    assert (tmp_path / renames.JOURNAL).exists()
    after = FilesystemStorage(tmp_path, lock_timeout=60)  # the next process

    with held(tmp_path / ".lock", fcntl.LOCK_SH):
        reading = asyncio.create_task(after.get(NEW))
        await asyncio.sleep(0.2)
        assert not reading.done()

    moved = await reading
    assert moved is not None and moved.data == b"two\n"
    with held(tmp_path / ".lock", fcntl.LOCK_SH):
        assert await FilesystemStorage(tmp_path, lock_timeout=0.5).get(OLD) is None


async def test_a_writer_that_meets_the_journal_finishes_it_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next process's first call is a create at the destination: it meets
    the finished rename (a conflict), never a half-moved file."""
    await crashed_after_the_journal(tmp_path, monkeypatch)
    after = FilesystemStorage(tmp_path)  # the next process

    assert await after.put_if_version(Write(NEW, b"mine\n", META), None) is None
    assert not (tmp_path / renames.JOURNAL).exists()
    moved = await after.get(NEW)
    assert moved is not None and moved.data == b"two\n"
