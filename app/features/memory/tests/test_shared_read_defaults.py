"""The shared guarded writes' defaults: a call without a key never asks storage
for its own write, and a create given no cap has none."""

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from tenchi.errors import AppError

from app.features.memory.domain.keys import address_of
from app.features.memory.ports import (
    Change,
    FileMetadata,
    ListedObject,
    StoredObject,
    VersionRecord,
    Write,
)
from app.features.memory.ports.storage_reads import (
    create_new,
    edit_existing,
    list_batches,
    try_edit,
)
from app.infra.memory.storage import MemoryStorage
from app.shared.errors import memory_not_found, version_conflict
from app.shared.locations import Location

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("", (), ("task",), AT)
TEA = address_of(Location("user", "notes", "tea"), "alice")
COFFEE = address_of(Location("user", "notes", "coffee"), "alice")


class AskedStorage(MemoryStorage):
    """Memory storage that notes each call key it is asked for its own change."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def own_change(self, key: str, call: str) -> VersionRecord | None:
        self.asked.append(call)
        return await super().own_change(key, call)


def appended(stored: StoredObject) -> Write:
    return Write(TEA.key, stored.data + b"- [stated] more\n", stored.metadata)


async def test_an_edit_without_a_call_key_asks_for_no_own_write() -> None:
    storage = AskedStorage()

    for edit in (edit_existing, try_edit):
        with pytest.raises(AppError) as raised:
            await edit(storage, TEA, appended)
        assert raised.value.definition is memory_not_found

    assert storage.asked == []


@pytest.mark.parametrize(
    "change", [None, Change("write_file", "http", AT)], ids=["no change", "unkeyed"]
)
async def test_a_create_without_a_call_key_over_a_file_asks_for_no_own_write(
    change: Change | None,
) -> None:
    storage = AskedStorage()
    there = await storage.put(Write(TEA.key, b"- [stated] theirs\n", META))

    with pytest.raises(AppError) as raised:
        await create_new(storage, TEA, Write(TEA.key, b"mine\n", META, change=change))

    assert raised.value.definition is version_conflict
    assert raised.value.details["version"] == there
    assert storage.asked == []


async def test_a_create_given_no_cap_has_none() -> None:
    storage = MemoryStorage()
    await storage.put(Write(TEA.key, b"- [stated] tea\n", META))

    created = await create_new(storage, COFFEE, Write(COFFEE.key, b"coffee\n", META))

    assert await storage.get(COFFEE.key) == created
    assert await storage.count(TEA.entity_prefix) == 2


class StartsNotingStorage(MemoryStorage):
    """Memory storage that notes where each listing starts."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: list[str | None] = []

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        self.starts.append(start_after)
        return await super().list_page(prefix, start_after=start_after, limit=limit)


async def test_listing_in_batches_starts_from_the_start_then_after_each_last_key() -> (
    None
):
    storage = StartsNotingStorage()
    for address in (COFFEE, TEA):
        await storage.put(Write(address.key, b"x\n", META))

    batches: list[Sequence[str]] = [
        [listed.key for listed in batch]
        async for batch in list_batches(storage, TEA.entity_prefix, batch=1)
    ]

    assert batches == [[COFFEE.key], [TEA.key]]
    assert storage.starts == [None, COFFEE.key, TEA.key]
