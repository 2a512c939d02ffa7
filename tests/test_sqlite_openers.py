"""What each SQLite opener hands its parts: the durability it was asked for,
the connection a locked point read falls back to, the background drain."""

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.change_markers import INITIAL, open_sqlite_change_markers
from app.infra.sqlite.audit_log import open_sqlite_audit_log
from app.infra.sqlite.connection import Synchronous
from app.infra.sqlite.point_reads import PointReads
from app.infra.sqlite.storage import open_sqlite_storage
from tests.support.sqlite_file import sql

KEY = "user/alice/notes/tea.md"
AT = datetime(2026, 12, 1, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
FULL, NORMAL = 2, 1
BOUND_SECONDS = 30.0


async def test_the_change_markers_sync_normally_whatever_the_storage_does(
    tmp_path: Path,
) -> None:
    async with open_sqlite_change_markers(str(tmp_path / "m.db")) as markers:
        db = markers._db  # pyright: ignore[reportPrivateUsage]
        rows = await db.execute_fetchall("PRAGMA synchronous")

    assert [row[0] for row in rows] == [NORMAL]


@pytest.mark.parametrize("level", ["normal", "full"])
async def test_the_audit_log_and_the_storage_sync_as_they_are_told(
    tmp_path: Path, level: Synchronous
) -> None:
    database = str(tmp_path / "m.db")
    async with (
        open_sqlite_audit_log(database, max_days=30, synchronous=level) as log,
        open_sqlite_storage(database, synchronous=level) as storage,
    ):
        found = [
            next(iter(await db.execute_fetchall("PRAGMA synchronous")))[0]
            for db in (log._db, storage._db)  # pyright: ignore[reportPrivateUsage]
        ]

    assert found == [NORMAL if level == "normal" else FULL] * 2


@pytest.fixture
def every_point_read_meets_a_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    def locked(self: PointReads, sql: str, parameters: Sequence[object]) -> None:
        self.deferred += 1

    monkeypatch.setattr(PointReads, "rows", locked)


@pytest.mark.usefixtures("every_point_read_meets_a_lock")
async def test_a_locked_point_read_is_made_on_the_opener_s_own_connection(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "m.db")
    async with (
        open_sqlite_storage(database, search_drain_every=None) as storage,
        open_sqlite_change_markers(database) as markers,
    ):
        version = await storage.put(Write(KEY, b"a\n", META))
        stored = await storage.get(KEY)
        marker = await markers.read("user/alice/")

        assert stored is not None and (stored.data, stored.version) == (
            b"a\n",
            version,
        )
        assert marker != INITIAL
        assert storage._reads.deferred >= 1  # pyright: ignore[reportPrivateUsage]
        assert markers._reads.deferred == 1  # pyright: ignore[reportPrivateUsage]


async def test_the_storage_drains_pending_search_work_in_the_background(
    tmp_path: Path,
) -> None:
    """Without a search, a written file leaves ``search_pending`` by itself."""
    database = tmp_path / "m.db"
    async with open_sqlite_storage(str(database), search_drain_every=0.01) as storage:
        await storage.put(
            Write(KEY, b"oolong\n", META, change=Change("write_file", "http", AT))
        )
        async with asyncio.timeout(BOUND_SECONDS):
            while sql(database, "SELECT key FROM search_pending"):
                await asyncio.sleep(0.01)


async def tasks_while_open(path: Path, every: float | None) -> int:
    async with open_sqlite_storage(str(path), search_drain_every=every):
        return len(asyncio.all_tasks())


async def test_a_storage_told_not_to_drain_runs_no_drain_of_its_own(
    tmp_path: Path,
) -> None:
    """``search_drain_every=None``: searches alone index (one task fewer)."""
    draining = await tasks_while_open(tmp_path / "a.db", 60.0)

    assert await tasks_while_open(tmp_path / "b.db", None) == draining - 1
