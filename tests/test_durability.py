"""Acknowledged writes survive power loss: SQLite syncs every commit, the
filesystem adapter syncs file and directory in the right order.

A killed process loses nothing the kernel already holds, so a crash test cannot
see a missing sync. These tests look at the syncs themselves: the
``synchronous`` pragma of every SQLite connection the service opens, and every
``fsync``, rename and unlink the filesystem adapter issues, in order.
"""

import os
import sqlite3
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from app.features.memory.ports import FileMetadata, Write
from app.infra.filesystem.storage import FilesystemStorage
from app.infra.sqlite import connection as sqlite_connection
from app.infra.sqlite.storage import SqliteStorage
from app.server.runtime import create_lifespan
from app.server.settings import Settings

FULL, NORMAL = 2, 1
META = FileMetadata("Tea", (), ("http",), datetime(2026, 1, 2, tzinfo=UTC))


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[aiosqlite.Connection]:
    """Every SQLite connection the service opens, as it opens it."""
    opened: list[aiosqlite.Connection] = []
    real_connect = aiosqlite.connect

    def recording_connect(*args: Any, **kwargs: Any) -> aiosqlite.Connection:
        connection = real_connect(*args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(sqlite_connection.aiosqlite, "connect", recording_connect)
    return opened


async def _pragmas(
    settings: Settings, opened: list[aiosqlite.Connection]
) -> list[tuple[int, str]]:
    """(synchronous, journal mode) of every connection, the storage's write
    connection (on its own thread, ``sqlite_group_commit``) included."""
    async with create_lifespan(settings)() as runtime:
        assert opened, "the service opened no SQLite connection"
        found: list[tuple[int, str]] = []
        for connection in opened:
            async with connection.execute("PRAGMA synchronous") as cursor:
                row = await cursor.fetchone()
            assert row is not None
            found.append((int(row[0]), await _journal(connection)))
        storage = runtime.context.storage
        assert isinstance(storage, SqliteStorage)
        writes = await storage.group_commit.call(_write_pragmas)
        return [*found, writes]


def _write_pragmas(db: sqlite3.Connection) -> tuple[int, str]:
    synchronous = db.execute("PRAGMA synchronous").fetchone()[0]
    return int(synchronous), str(db.execute("PRAGMA journal_mode").fetchone()[0])


async def _journal(connection: aiosqlite.Connection) -> str:
    async with connection.execute("PRAGMA journal_mode") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return str(row[0])


def _settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(
        storage=f"sqlite:///{tmp_path / 'wenchang.db'}",
        tokens_file=str(tmp_path / "tokens.json"),
        **overrides,
    )


async def test_sqlite_syncs_every_commit_by_default(
    tmp_path: Path, connections: list[aiosqlite.Connection]
) -> None:
    found = await _pragmas(_settings(tmp_path), connections)
    # Storage, idempotency records and audit events sync every commit; the
    # index's change markers are not acknowledgements (a power cut also empties
    # every cache) and stay NORMAL, as rate-limit counters do when kept here.
    levels = sorted(level for level, _ in found)
    assert levels == [NORMAL] + [FULL] * (len(found) - 1)
    assert len(found) >= 5
    assert {journal for _, journal in found} == {"wal"}


async def test_sqlite_synchronous_normal_is_an_explicit_trade(
    tmp_path: Path, connections: list[aiosqlite.Connection]
) -> None:
    settings = _settings(tmp_path, sqlite_synchronous="normal")
    found = await _pragmas(settings, connections)
    assert [level for level, _ in found] == [NORMAL] * len(found)


def test_the_setting_accepts_either_case() -> None:
    settings = Settings.model_validate({"sqlite_synchronous": "NORMAL"})
    assert settings.sqlite_synchronous == "normal"
    with pytest.raises(ValueError):
        Settings.model_validate({"sqlite_synchronous": "off"})


@dataclass
class DiskLog:
    """fsync, rename, mkdir and unlink calls with the paths they touched, in order."""

    root: Path
    events: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    def relative(self, path: str | os.PathLike[str]) -> str:
        return os.path.relpath(os.fspath(path), self.root)

    def index(self, kind: str, predicate: Callable[[str], bool]) -> int:
        for position, (seen, path) in enumerate(self.events):
            if seen == kind and predicate(path):
                return position
        raise AssertionError(f"no {kind} matching in {self.events}")

    def last(self, kind: str, predicate: Callable[[str], bool]) -> int:
        matches = [
            position
            for position, (seen, path) in enumerate(self.events)
            if seen == kind and predicate(path)
        ]
        assert matches, f"no {kind} matching in {self.events}"
        return matches[-1]


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Generator[DiskLog]:
    root = tmp_path / "files"
    root.mkdir()
    log = DiskLog(root.resolve())
    real_fsync, real_replace = os.fsync, os.replace
    real_mkdir, real_unlink = os.mkdir, os.unlink

    def fsync(descriptor: int) -> None:
        target = os.readlink(f"/proc/self/fd/{descriptor}")
        log.events.append(("fsync", log.relative(target)))
        real_fsync(descriptor)

    def replace(source: Any, target: Any, **kwargs: Any) -> None:
        real_replace(source, target, **kwargs)
        log.events.append(("rename", log.relative(target)))

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        real_mkdir(path, *args, **kwargs)
        log.events.append(("mkdir", log.relative(path)))

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        real_unlink(path, *args, **kwargs)
        log.events.append(("unlink", log.relative(path)))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "unlink", unlink)
    yield log


def _is(name: str) -> Callable[[str], bool]:
    return lambda path: path == name


async def test_a_create_syncs_directories_body_and_sidecar_in_order(
    disk: DiskLog,
) -> None:
    storage = FilesystemStorage(disk.root)
    version = await storage.put_if_version(
        Write("user/alice/notes/tea.md", b"x", META), None
    )
    assert version is not None
    area, body = "user/alice/notes", f"user/alice/notes/tea.md%{version}"
    sidecar = "user/alice/notes/tea.md%meta"
    # Each new directory is synced into its parent before anything names it.
    for child, parent in (("user", "."), ("user/alice", "user"), (area, "user/alice")):
        assert disk.index("mkdir", _is(child)) < disk.index("fsync", _is(parent))
        assert disk.index("fsync", _is(parent)) < disk.index("rename", _is(sidecar))
    body_synced = disk.index("fsync", _is(body))
    name_synced = disk.index("fsync", _is(area))
    sidecar_data = disk.index("fsync", lambda p: p.startswith(f"{area}/.tmp-"))
    commit = disk.index("rename", _is(sidecar))
    # Body data, then the body's name, then the sidecar's data, then the rename.
    assert body_synced < name_synced < commit
    assert sidecar_data < commit
    # The rename itself is made durable before the call returns.
    assert disk.last("fsync", _is(area)) > commit


async def test_a_replace_syncs_before_and_after_the_commit(disk: DiskLog) -> None:
    storage = FilesystemStorage(disk.root)
    first = await storage.put_if_version(
        Write("user/alice/notes/tea.md", b"x", META), None
    )
    assert first is not None
    disk.events.clear()
    second = await storage.put_if_version(
        Write("user/alice/notes/tea.md", b"y", META), first
    )
    assert second is not None
    area, sidecar = "user/alice/notes", "user/alice/notes/tea.md%meta"
    commit = disk.index("rename", _is(sidecar))
    assert disk.index("fsync", _is(f"{area}/tea.md%{second}")) < commit
    assert disk.index("fsync", _is(area)) < commit
    assert disk.last("fsync", _is(area)) > commit
    # The old body goes only after the new sidecar is durable.
    assert disk.index("unlink", _is(f"{area}/tea.md%{first}")) > disk.last(
        "fsync", _is(area)
    )


async def test_a_delete_is_durable_before_it_returns(disk: DiskLog) -> None:
    storage = FilesystemStorage(disk.root)
    version = await storage.put_if_version(
        Write("user/alice/notes/tea.md", b"x", META), None
    )
    assert version is not None
    disk.events.clear()
    assert await storage.delete_if_version("user/alice/notes/tea.md", version)
    area = "user/alice/notes"
    removed = disk.index("unlink", _is(f"{area}/tea.md%meta"))
    assert disk.index("fsync", _is(area)) > removed
