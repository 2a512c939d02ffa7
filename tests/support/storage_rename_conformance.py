"""Rename behaviours of the Storage port (``Renames``), once for all adapters.

Mixed into ``StorageConformance``: a rename moves data, metadata and history
in one step under a new version, refuses (changing nothing) on a stale source
version or a destination that is not at ``replacing``, logs the old key then
the new one, and a reader racing it always finds exactly one of the two keys.
"""

import asyncio

import pytest

from app.features.memory.ports import ChangeFeed, Storage, Write
from app.features.memory.ports.renames import Renames
from tests.support.storage_adapters import AdapterUnderTest
from tests.support.storage_history_conformance import KEY, META, NOW, change, history

MOVED = "user/alice/projects/chai.md"
ENTITY = "user/alice/"


def renames(storage: Storage) -> Renames:
    if not isinstance(storage, Renames):
        pytest.skip(f"{type(storage).__name__} cannot rename yet")
    return storage


async def created(storage: Storage, key: str = KEY, data: bytes = b"one\n") -> str:
    version = await storage.put_if_version(
        Write(key, data, META, change=change("write_file")), None
    )
    assert version is not None
    return version


class StorageRenameConformance:
    """Rename cases of the Storage port contract; supply ``adapter``."""

    async def test_rename_moves_data_metadata_and_history(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        mover = renames(storage)
        first = await created(storage)
        second = await storage.put_if_version(
            Write(KEY, b"two\n", META, change=change("append_line")), first
        )
        assert second is not None

        version = await mover.rename_if_version(
            KEY, MOVED, second, replacing=None, change=change("rename_file")
        )

        assert version is not None and version not in {first, second}
        assert await storage.get(KEY) is None
        moved = await storage.get(MOVED)
        assert moved is not None
        assert (moved.data, moved.metadata, moved.version) == (b"two\n", META, version)
        assert [(r.version, r.operation) for r in await history(storage, MOVED)] == [
            (version, "rename_file"),
            (second, "append_line"),
            (first, "write_file"),
        ]
        assert await history(storage, KEY) == []
        old = await storage.get_version(MOVED, first)
        assert old is not None and old.data == b"one\n"
        listed = await storage.list_page(ENTITY, start_after=None, limit=10)
        assert [item.key for item in listed] == [MOVED]

    async def test_rename_of_a_file_written_without_a_change_records_the_rename(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A version written untracked has no record to move: the rename's own
        is the destination's history, and the file moves whole."""
        storage = adapter.storage
        mover = renames(storage)
        first = await storage.put(Write(KEY, b"one\n", META))

        version = await mover.rename_if_version(
            KEY, MOVED, first, replacing=None, change=change("rename_file")
        )

        assert version is not None
        moved = await storage.get(MOVED)
        assert moved is not None and (moved.data, moved.version) == (b"one\n", version)
        assert await storage.get(KEY) is None
        assert [(r.version, r.operation) for r in await history(storage, MOVED)] == [
            (version, "rename_file")
        ]
        assert await history(storage, KEY) == []

    async def test_rename_logs_the_old_key_then_the_new(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        mover = renames(storage)
        if not isinstance(storage, ChangeFeed):
            pytest.skip("no change log")
        first = await created(storage)
        version = await mover.rename_if_version(
            KEY, MOVED, first, replacing=None, change=change("rename_file")
        )
        page = await storage.changes_after(ENTITY, 0, now=NOW, limit=10)
        base = page.changes[0].seq - 1
        assert [
            (e.seq - base, e.key, e.operation, e.version) for e in page.changes
        ] == [
            (1, KEY, "write_file", first),
            (2, KEY, "rename_file", version),
            (3, MOVED, "rename_file", version),
        ]

    async def test_rename_refused_changes_nothing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A stale source version, or a destination not at ``replacing``."""
        storage = adapter.storage
        mover = renames(storage)
        first = await created(storage)
        there = await created(storage, MOVED, b"there\n")
        rename = change("rename_file")

        stale = await mover.rename_if_version(
            KEY, "user/alice/x/y.md", "nope", replacing=None, change=rename
        )
        taken = await mover.rename_if_version(
            KEY, MOVED, first, replacing=None, change=rename
        )
        wrong = await mover.rename_if_version(
            KEY, MOVED, first, replacing="nope", change=rename
        )

        assert (stale, taken, wrong) == (None, None, None)
        source, destination = await storage.get(KEY), await storage.get(MOVED)
        assert source is not None and source.version == first
        assert destination is not None and destination.version == there
        assert len(await history(storage, KEY)) == 1
        assert len(await history(storage, MOVED)) == 1
        assert await storage.get("user/alice/x/y.md") is None

    async def test_rename_replaces_the_destination_at_replacing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """An expired file there is replaced; its records stay, before the move."""
        storage = adapter.storage
        mover = renames(storage)
        first = await created(storage)
        there = await created(storage, MOVED, b"old\n")

        version = await mover.rename_if_version(
            KEY, MOVED, first, replacing=there, change=change("rename_file")
        )

        moved = await storage.get(MOVED)
        assert moved is not None and (moved.data, moved.version) == (b"one\n", version)
        assert await storage.get(KEY) is None
        assert [r.version for r in await history(storage, MOVED)] == [
            version,
            first,
            there,
        ]

    async def test_a_reader_racing_a_rename_finds_exactly_one_key(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Through a second client: the source or the destination, never both."""
        storage = adapter.storage
        mover = renames(storage)
        first = await created(storage)
        async with adapter.sibling() as other:
            seen: list[tuple[bool, bool]] = []

            async def read() -> None:
                for _ in range(20):
                    listed = await other.list_page(ENTITY, start_after=None, limit=10)
                    keys = {item.key for item in listed}
                    seen.append((KEY in keys, MOVED in keys))
                    await asyncio.sleep(0)

            version, _ = await asyncio.gather(
                mover.rename_if_version(
                    KEY, MOVED, first, replacing=None, change=change("rename_file")
                ),
                read(),
            )
        assert version is not None
        assert all(old != new for old, new in seen)
