"""A read by key runs on the loop's thread; a lock sends it to the storage thread."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from app.features.memory.ports import FileMetadata, Write
from app.infra.sqlite_edits import GET
from app.infra.sqlite_point_reads import PointReads
from app.infra.sqlite_storage import open_sqlite_storage

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

        assert [(bytes(row[0]), row[-1]) for row in rows] == [(b"a\n", version)]
        assert locked.deferred == 1
