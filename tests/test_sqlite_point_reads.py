"""A read by key runs on the loop's thread; a lock sends it to the storage thread."""

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from app.features.memory.ports import FileMetadata, Write
from app.infra.change_markers import INITIAL, open_sqlite_change_markers
from app.infra.sqlite.edits import GET
from app.infra.sqlite.point_reads import PointReads
from app.infra.sqlite.storage import open_sqlite_storage

KEY = "user/alice/notes/tea.md"
META = FileMetadata("Tea", (), ("http",), datetime(2026, 12, 1, tzinfo=UTC))


async def test_a_read_sees_every_write_acknowledged_before_it(tmp_path: Path) -> None:
    async with open_sqlite_storage(str(tmp_path / "m.db")) as storage:
        first = await storage.put(Write(KEY, b"a\n", META))
        read = await storage.get(KEY)
        second = await storage.put_if_version(Write(KEY, b"b\n", META), first)

        assert read is not None and (read.data, read.version) == (b"a\n", first)
        again = await storage.get(KEY)
        assert again is not None and (again.data, again.version) == (b"b\n", second)
        assert storage._reads.deferred == 0  # pyright: ignore[reportPrivateUsage]


class _Locked:
    """A connection that meets a lock on every statement, as a WAL reader can."""

    def execute(self, sql: str, parameters: object) -> sqlite3.Cursor:
        error = sqlite3.OperationalError("database is locked")
        error.sqlite_errorcode = sqlite3.SQLITE_BUSY
        raise error


async def test_a_locked_read_goes_to_the_storage_thread(tmp_path: Path) -> None:
    """The loop never waits for a lock: the read is made where waiting is safe."""
    async with open_sqlite_storage(str(tmp_path / "m.db")) as storage:
        version = await storage.put(Write(KEY, b"a\n", META))
        connection = storage._db  # pyright: ignore[reportPrivateUsage]
        locked = PointReads(cast(sqlite3.Connection, _Locked()), connection)

        rows = await locked.fetch(GET, (KEY,))
        again = await locked.fetch(GET, (KEY,))

        assert [(bytes(row[0]), row[-1]) for row in rows] == [(b"a\n", version)]
        assert again == rows
        assert locked.deferred == 2  # each read that met the lock counts


async def test_a_marker_read_runs_here_and_sees_other_processes_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conditional index reads one marker per entity, each on the loop's thread:
    a write committed by another connection is seen by the very next read."""
    here: list[str] = []
    rows = PointReads.rows

    def counted(self: PointReads, sql: str, parameters: Sequence[Any]) -> Any:
        here.append(sql)
        return rows(self, sql, parameters)

    monkeypatch.setattr(PointReads, "rows", counted)
    database = str(tmp_path / "m.db")
    async with (
        open_sqlite_change_markers(database) as markers,
        open_sqlite_storage(database) as storage,
    ):
        before = await markers.read("user/alice/")
        await storage.put(Write(KEY, b"a\n", META))  # its trigger moves the marker
        after = await markers.read("user/alice/")

        assert before == INITIAL and after != before
        assert sum("change_markers" in sql for sql in here) == 2
        assert markers._reads.deferred == 0  # pyright: ignore[reportPrivateUsage]


async def test_a_read_that_meets_no_lock_does_not_use_the_storage_thread(
    tmp_path: Path,
) -> None:
    """Reads made here answer from this connection: the fallback, a connection
    of another file holding other content, is never asked."""
    async with (
        open_sqlite_storage(str(tmp_path / "here.db")) as here,
        open_sqlite_storage(str(tmp_path / "other.db")) as other,
    ):
        version = await here.put(Write(KEY, b"here\n", META))
        await other.put(Write(KEY, b"other\n", META))
        db = sqlite3.connect(tmp_path / "here.db", check_same_thread=False)
        try:
            reads = PointReads(db, other._db)  # pyright: ignore[reportPrivateUsage]

            rows = await reads.fetch(GET, (KEY,))
        finally:
            db.close()

        assert [(bytes(row[0]), row[-1]) for row in rows] == [(b"here\n", version)]
        assert reads.deferred == 0
