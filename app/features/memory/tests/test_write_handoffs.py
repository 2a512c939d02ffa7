"""What a delete or rename hands the ports: the call's audit event, its own
write to the index cache, and a refusal that reads the file as it is now."""

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import PendingEvent
from app.features.memory.domain import file_key
from app.features.memory.ports import Change, FileMetadata, Write
from app.features.memory.schemas import DeleteFile, MemoryFile, RenameFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.rename_file import rename_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext
from app.shared.errors import memory_not_found, version_conflict

from .conftest import LOCATION, START, ScriptedStorage, create, make_context, rewrite
from .requests import FACTS, append_request, replace_request, write_request
from .test_rename_edges import SpyCache

META = FileMetadata("", (), ("http",), START)
EVENT = PendingEvent(lambda: pytest.fail("storage here never claims the event"))


class SpyStorage(MemoryStorage):
    """Memory storage that keeps the changes its writes were handed."""

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[Change | None] = []

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        self.changes.append(write.change)
        return await super().put_if_version(write, expected)

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        self.changes.append(change)
        return await super().delete_if_version(key, expected, change=change)

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        self.changes.append(change)
        return await super().rename_if_version(
            source, destination, expected, replacing=replacing, change=change
        )


async def test_a_delete_hands_storage_the_call_s_audit_event_and_key() -> None:
    storage, cache = SpyStorage(), SpyCache()
    context = make_context(storage=storage, index_cache=cache)
    first = await create(context, "x")
    storage.changes.clear()
    cache.calls.clear()
    call = replace(context, audit_event=EVENT, call_key="k-1")

    await delete_file(DeleteFile(**LOCATION, expected_version=first.version), call)

    [change] = storage.changes
    assert change is not None
    assert (change.operation, change.call, change.event) == (
        "delete_file",
        "k-1",
        EVENT,
    )
    assert cache.calls == [("user/alice/", True)]


async def test_a_rename_hands_storage_the_call_s_audit_event_and_key() -> None:
    storage = SpyStorage()
    context = make_context(storage=storage)
    first = await create(context, "x")
    storage.changes.clear()
    call = replace(context, audit_event=EVENT, call_key="k-1")
    request = RenameFile(
        **LOCATION, new_area="projects", new_name="chai", expected_version=first.version
    )

    await rename_file(request, call)

    [change] = storage.changes
    assert change is not None
    assert (change.operation, change.call, change.event) == (
        "rename_file",
        "k-1",
        EVENT,
    )


async def test_a_delete_that_loses_to_a_write_expiring_the_file_finds_none() -> None:
    """The writer made the file expired: what is there now is no file."""

    async def expire(inner: MemoryStorage) -> None:
        key = file_key("user", "alice", "notes", "tea")
        stored = await inner.get(key)
        assert stored is not None
        gone = replace(stored.metadata, expires_at=START - timedelta(seconds=1))
        await inner.put(Write(key, stored.data, gone))

    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "x")
    storage.races.append(expire)

    with pytest.raises(AppError) as caught:
        await delete_file(
            DeleteFile(**LOCATION, expected_version=first.version), context
        )

    assert caught.value.definition is memory_not_found


async def test_a_keyed_delete_refused_over_a_write_of_its_key_stands() -> None:
    """Only a tombstone answers a delete: a write under the same key does not."""
    storage = ScriptedStorage(keeps_call_keys=True)
    context = replace(make_context(storage=storage), call_key="k-1")
    first = await create(context, "x")
    await storage.inner.put(
        Write(file_key("user", "alice", "notes", "tea"), b"y", META)
    )

    with pytest.raises(AppError) as caught:
        await delete_file(
            DeleteFile(**LOCATION, expected_version=first.version), context
        )

    assert caught.value.definition is version_conflict


type Edit = Callable[[AppContext, str], Awaitable[MemoryFile]]
EDITS: dict[str, Edit] = {
    "write_file": lambda c, v: write_file(write_request(FACTS, v), c),
    "append_line": lambda c, v: append_line(append_request(v), c),
    "replace_fact": lambda c, v: replace_fact(replace_request(v), c),
}


@pytest.mark.parametrize("operation", list(EDITS))
async def test_an_edit_hands_storage_the_call_s_audit_event_and_key(
    operation: str,
) -> None:
    storage, cache = SpyStorage(), SpyCache()
    context = make_context(storage=storage, index_cache=cache)
    first = await create(context, FACTS)
    storage.changes.clear()
    cache.calls.clear()
    call = replace(context, audit_event=EVENT, call_key="k-1")

    await EDITS[operation](call, first.version)

    [change] = storage.changes
    assert change is not None
    assert (change.operation, change.call, change.event) == (operation, "k-1", EVENT)
    assert cache.calls == [("user/alice/", True)]


async def test_a_replace_losing_every_race_to_a_file_that_then_expired_finds_none() -> (
    None
):
    """Two rewrites, then one that made the file expired: no file is left to
    report the conflict with."""

    async def expire(inner: MemoryStorage) -> None:
        key = file_key("user", "alice", "notes", "tea")
        stored = await inner.get(key)
        assert stored is not None
        gone = replace(stored.metadata, expires_at=START - timedelta(seconds=1))
        await inner.put(Write(key, b"- [stated] green, then gone\n", gone))

    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races.extend(
        [rewrite("- [stated] green one\n"), rewrite("- [stated] green two\n"), expire]
    )

    with pytest.raises(AppError) as caught:
        await replace_fact(replace_request(first.version), context)

    assert caught.value.definition is memory_not_found


@pytest.mark.parametrize("keyed", [False, True])
async def test_a_replace_of_an_expired_file_finds_none(keyed: bool) -> None:
    """Keyed or not, an edit never lands on a file whose expiry has passed."""
    storage = MemoryStorage()
    context = make_context(storage=storage)
    key = file_key("user", "alice", "notes", "tea")
    await create(context, FACTS)
    stored = await storage.get(key)
    assert stored is not None
    gone = replace(stored.metadata, expires_at=START - timedelta(seconds=1))
    version = await storage.put(Write(key, stored.data, gone))
    caller = replace(context, call_key="k-1") if keyed else context

    with pytest.raises(AppError) as caught:
        await replace_fact(replace_request(version), caller)

    assert caught.value.definition is memory_not_found
