"""rename_file at its edges: storage that cannot rename, expiry, races, own retries."""

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits, file_key
from app.features.memory.ports import Change, FileMetadata, Write
from app.features.memory.schemas import ReadFile, RenameFile
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.rename_file import rename_file
from app.infra.memory.index_cache import NoIndexCache
from app.infra.memory.storage import MemoryStorage
from app.shared.errors import (
    backend_unavailable,
    invalid_argument,
    memory_not_found,
    version_conflict,
)

from .conftest import START, ScriptedStorage, create, make_context, snapshot

TARGET = file_key("user", "alice", "projects", "chai")
META = FileMetadata("", (), ("http",), START)


class SetClock:
    """A clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


class RenamingStorage(ScriptedStorage):
    """ScriptedStorage that renames too: races and lost answers reach renames."""

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        await self._race()
        version = await self.inner.rename_if_version(
            source, destination, expected, replacing=replacing, change=change
        )
        if version is not None:
            await self._kept(destination, change)
        return None if self.lose_acks else version


class SpyCache(NoIndexCache):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, bool]] = []

    async def invalidate(self, prefix: str, *, after_write: bool = False) -> None:
        self.calls.append((prefix, after_write))


def request(version: str, *, name: str = "chai") -> RenameFile:
    return RenameFile(
        scope="user",
        area="notes",
        name="tea",
        new_area="projects",
        new_name=name,
        expected_version=version,
    )


def at_target() -> ReadFile:
    return ReadFile(scope="user", area="projects", name="chai")


def expired_write(content: str) -> Write:
    """Another writer's file at the target that expired before the test began."""
    metadata = FileMetadata(
        "", (), ("http",), START, expires_at=START - timedelta(seconds=1)
    )
    return Write(TARGET, content.encode(), metadata)


async def test_storage_that_cannot_rename_refuses_before_anything_changes() -> None:
    context = make_context(storage=ScriptedStorage())
    first = await create(context, "x")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), context)

    assert caught.value.definition is backend_unavailable
    assert caught.value.details["reason"] == "unsupported"
    assert str(caught.value).startswith("this storage cannot rename files Retrying")
    assert await snapshot(context.storage) == before


async def test_an_expired_file_cannot_be_renamed() -> None:
    clock = SetClock()
    limits = MemoryLimits(area_ttl={"notes": 60})
    context = make_context(storage=MemoryStorage(), clock=clock, limits=limits)
    first = await create(context, "x")
    clock.now = START + timedelta(seconds=60)

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), context)

    assert caught.value.definition is memory_not_found
    assert caught.value.details["area"] == "notes"


async def test_a_rename_replaces_an_expired_file_at_the_new_path() -> None:
    context = make_context(storage=MemoryStorage(), clock=SetClock())
    first = await create(context, "mine")
    await context.storage.put(expired_write("stale"))

    moved = await rename_file(request(first.version), context)

    assert (moved.area, moved.name, moved.content) == ("projects", "chai", "mine")
    assert (await read_file(at_target(), context)).content == "mine"


async def test_a_file_created_at_the_new_path_meanwhile_is_a_conflict() -> None:
    """Another writer takes the new path between the check and the move."""

    async def take(inner: MemoryStorage) -> None:
        await inner.put(replace(expired_write("theirs"), metadata=META))

    storage = RenamingStorage()
    context = make_context(storage=storage)
    first = await create(context, "mine")
    storage.races.append(take)

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), context)

    assert caught.value.definition is version_conflict
    details = caught.value.details
    assert (details["area"], details["name"], details["content"]) == (
        "projects",
        "chai",
        "theirs",
    )


async def test_a_rename_that_keeps_losing_to_an_expired_file_reports_it_gone() -> None:
    """Every try loses to another rewrite of an expired file at the new path:
    the refusal says what is there now, which is no (live) file."""

    async def rewrite_expired(inner: MemoryStorage) -> None:
        await inner.put(expired_write("again"))

    storage = RenamingStorage()
    context = make_context(storage=storage, clock=SetClock())
    first = await create(context, "mine")
    await storage.inner.put(expired_write("stale"))
    storage.races.extend([rewrite_expired] * 3)

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), context)

    assert caught.value.definition is memory_not_found
    assert (caught.value.details["area"], caught.value.details["name"]) == (
        "projects",
        "chai",
    )
    assert (
        await read_file(ReadFile(scope="user", area="notes", name="tea"), context)
    ).content == "mine"


async def test_a_keyed_rename_repeated_after_it_landed_answers_the_move() -> None:
    """The first attempt's answer was lost: the repeat answers the landed move."""
    storage = RenamingStorage(keeps_call_keys=True)
    context = make_context(storage=storage)
    first = await create(context, "mine")
    keyed = replace(context, call_key="k-1")
    storage.lose_acks = True

    moved = await rename_file(request(first.version), keyed)

    stored = await storage.inner.get(TARGET)
    assert stored is not None
    assert (moved.name, moved.content, moved.version) == (
        "chai",
        "mine",
        stored.version,
    )


async def test_a_keyed_rename_refused_over_another_operation_of_its_key_stands() -> (
    None
):
    """Only a rename record answers a rename: a write under the same key does not."""
    storage = RenamingStorage(keeps_call_keys=True)
    context = make_context(storage=storage)
    keyed = replace(context, call_key="k-1")
    first = await create(context, "mine")
    await create(keyed, "theirs", area="projects", name="chai")

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), keyed)

    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == "theirs"


async def test_renaming_onto_its_own_path_names_new_name() -> None:
    context = make_context()
    first = await create(context, "x")
    same = RenameFile(
        scope="user",
        area="notes",
        name="tea",
        new_area="notes",
        new_name="tea",
        expected_version=first.version,
    )

    with pytest.raises(AppError) as caught:
        await rename_file(same, context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == "new_name"
    assert "invalid: The new path is the file's own path. This" in str(caught.value)


async def test_a_version_that_is_not_utf8_is_blamed() -> None:
    context = make_context()
    await create(context, "x")
    bad = request("1").model_copy(update={"expected_version": "\ud800"})

    with pytest.raises(AppError) as caught:
        await rename_file(bad, context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == "expected_version"


async def test_a_rename_invalidates_the_entity_index_as_its_own_write() -> None:
    cache = SpyCache()
    context = make_context(index_cache=cache)
    first = await create(context, "x")
    cache.calls.clear()

    await rename_file(request(first.version), context)

    assert cache.calls == [("user/alice/", True)]
