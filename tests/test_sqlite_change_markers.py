"""On SQLite an entity's change marker moves in the transaction that changes a file.

Every mutation of a file replaces its entity's marker in the same transaction:
a write whose marker cannot be stored does not land, a write that does not
land leaves the marker alone, and the write's own call then spends no second
commit on it (``invalidate(..., after_write=True)``). An invalidation without a
write (the operator's task) still moves it, whatever the index cache (memory,
none).
"""

import asyncio
import sqlite3
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import (
    Change,
    FileMetadata,
    IndexCache,
    Storage,
    Write,
)
from app.infra.change_markers import ChangeMarkers
from app.infra.port_wiring import open_change_markers, open_index_cache, open_storage
from app.shared.errors import backend_unavailable

PREFIX = "user/alice/"
KEY = "user/alice/notes/tea.md"
META = FileMetadata("tea", ("green",), ("http",), datetime(2026, 1, 2, tzinfo=UTC))
CHANGE = Change("write_file", "http", META.last_updated)


@dataclass
class Backend:
    database: Path
    storage: Storage
    cache: IndexCache
    markers: ChangeMarkers
    """Another process's view of the markers (a connection of its own)."""


@pytest.fixture(params=["memory", "none"])
async def backend(
    tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncGenerator[Backend]:
    database = tmp_path / "wenchang.db"
    url = f"sqlite:///{database}"
    async with AsyncExitStack() as stack:
        storage = await stack.enter_async_context(open_storage(url))
        cache = await stack.enter_async_context(
            open_index_cache(request.param, ttl=30, storage_url=url, storage=storage)
        )
        markers = await stack.enter_async_context(open_change_markers(url, None))
        yield Backend(database, storage, cache, markers)


def write(data: bytes, change: Change | None = CHANGE) -> Write:
    return Write(KEY, data, META, change=change)


async def test_every_kind_of_file_change_moves_the_marker_by_itself(
    backend: Backend,
) -> None:
    """No invalidation is called: the writes alone move the marker."""
    storage, seen = backend.storage, [await backend.markers.read(PREFIX)]

    async def moved() -> None:
        seen.append(await backend.markers.read(PREFIX))
        assert seen[-1] != seen[-2]

    first = await storage.put_if_version(write(b"a"), None)
    assert first is not None
    await moved()
    second = await storage.put_if_version(write(b"b"), first)
    assert second is not None
    await moved()
    third = await storage.put(write(b"c", change=None))
    await moved()
    assert await storage.delete_if_version(KEY, third, change=CHANGE)
    await moved()
    again = await storage.put(write(b"d"))
    await moved()
    assert await storage.delete_if_version(KEY, again)
    await moved()
    assert await backend.markers.read("user/bob/") == "0"


async def test_a_write_that_does_not_land_leaves_the_marker(backend: Backend) -> None:
    version = await backend.storage.put_if_version(write(b"a"), None)
    assert version is not None
    before = await backend.markers.read(PREFIX)

    assert await backend.storage.put_if_version(write(b"b"), "stale") is None
    assert await backend.storage.put_if_version(write(b"b"), None) is None
    assert not await backend.storage.delete_if_version(KEY, "stale", change=CHANGE)

    assert await backend.markers.read(PREFIX) == before


async def test_a_write_whose_marker_cannot_be_stored_does_not_land(
    backend: Backend,
) -> None:
    """Marker and file commit together: refusing the marker refuses the write."""
    version = await backend.storage.put_if_version(write(b"kept"), None)
    assert version is not None
    before = await backend.markers.read(PREFIX)
    refuse = sqlite3.connect(backend.database, isolation_level=None)
    try:
        refuse.execute(
            "CREATE TRIGGER refuse_markers BEFORE UPDATE ON change_markers "
            "BEGIN SELECT RAISE(ABORT, 'no marker'); END"
        )
    finally:
        refuse.close()

    with pytest.raises(AppError) as raised:
        await backend.storage.put_if_version(write(b"lost"), version)

    assert raised.value.definition is backend_unavailable
    stored = await backend.storage.get(KEY)
    assert stored is not None and (stored.data, stored.version) == (b"kept", version)
    assert await backend.markers.read(PREFIX) == before
    versions = await backend.storage.list_versions(KEY, after=None, limit=10)
    assert [record.version for record in versions] == [version]


async def test_the_calls_own_invalidation_after_its_write_commits_nothing_more(
    backend: Backend,
) -> None:
    async def write_then_invalidate(data: bytes) -> str:
        await backend.storage.put(write(data))
        written = await backend.markers.read(PREFIX)
        await backend.cache.invalidate(PREFIX, after_write=True)
        return written

    written = await asyncio.create_task(write_then_invalidate(b"a"))

    assert await backend.markers.read(PREFIX) == written


async def test_an_invalidation_without_a_write_moves_the_marker(
    backend: Backend,
) -> None:
    """The operator's invalidate task: no write moved the marker before it."""
    await asyncio.create_task(backend.storage.put(write(b"a")))
    before = await backend.markers.read(PREFIX)

    await asyncio.create_task(backend.cache.invalidate(PREFIX))

    assert await backend.markers.read(PREFIX) != before
