"""Erasure behaviours of the Storage port (``erase_if_version``), once for all adapters.

Mixed into ``StorageConformance``: an erase at the listed version removes the
file and every version record of it, and nothing of another key (not even one
its key is a prefix of); at any other version it changes nothing, so a file
rewritten since it was listed stays whole with its history.
"""

from app.features.memory.ports import Storage, Write
from tests.support.storage_adapters import AdapterUnderTest
from tests.support.storage_history_conformance import KEY, META, change, history

LONGER = KEY + "-kept"
"""A key ``KEY`` is a prefix of: an erase of ``KEY`` must not reach it."""


async def written_twice(storage: Storage, key: str) -> str:
    first = await storage.put_if_version(
        Write(key, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None
    second = await storage.put_if_version(
        Write(key, b"two\n", META, change=change("append_line")), first
    )
    assert second is not None
    return second


class StorageEraseConformance:
    """Erase cases of the Storage port contract; supply ``adapter``."""

    async def test_erase_removes_the_file_and_its_history_only(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        version = await written_twice(storage, KEY)
        kept = await written_twice(storage, LONGER)
        assert len(await history(storage)) == 2

        erased = await storage.erase_if_version(KEY, version)

        assert erased
        assert await storage.get(KEY) is None
        assert await history(storage) == []
        listed = await storage.list_page("user/", start_after=None, limit=10)
        assert [item.key for item in listed] == [LONGER]
        other = await storage.get(LONGER)
        assert other is not None and other.version == kept
        assert len(await history(storage, LONGER)) == 2

    async def test_erase_at_another_version_changes_nothing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A file rewritten since it was listed is not erased, nor its history."""
        storage = adapter.storage
        listed = await written_twice(storage, KEY)
        rewritten = await storage.put_if_version(
            Write(KEY, b"three\n", META, change=change("write_file")), listed
        )
        assert rewritten is not None

        erased = await storage.erase_if_version(KEY, listed)

        assert not erased
        stored = await storage.get(KEY)
        assert stored is not None and stored.version == rewritten
        assert stored.data == b"three\n"
        assert len(await history(storage)) == 3

    async def test_erase_of_a_missing_file_is_false(
        self, adapter: AdapterUnderTest
    ) -> None:
        version = await written_twice(adapter.storage, KEY)
        assert await adapter.storage.erase_if_version(KEY, version)

        assert not await adapter.storage.erase_if_version(KEY, version)
        assert not await adapter.storage.erase_if_version(LONGER, version)
