from collections.abc import Awaitable, Callable

import pytest

from app.features.memory.schemas import (
    AppendLine,
    DeleteFile,
    GetMemoryIndex,
    MemoryFile,
    ReplaceFact,
    WriteFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.index_cache import MemoryIndexCache
from app.server.context import AppContext

from .conftest import ScriptedStorage, create, make_context
from .index_files import paths, put

Mutation = Callable[[AppContext, MemoryFile], Awaitable[object]]


async def _create_other(context: AppContext, _: MemoryFile) -> object:
    return await create(context, "new", name="other")


async def _replace(context: AppContext, file: MemoryFile) -> object:
    request = WriteFile(
        scope="user",
        area="notes",
        name="tea",
        content="new",
        description="",
        aliases=[],
        expected_version=file.version,
    )
    return await write_file(request, context)


async def _append(context: AppContext, file: MemoryFile) -> object:
    request = AppendLine(
        scope="user",
        area="notes",
        name="tea",
        line="- [stated] New.",
        expected_version=file.version,
    )
    return await append_line(request, context)


async def _replace_fact(context: AppContext, file: MemoryFile) -> object:
    request = ReplaceFact(
        scope="user",
        area="notes",
        name="tea",
        old_string="old",
        new_string="new",
        expected_version=file.version,
    )
    return await replace_fact(request, context)


async def _delete(context: AppContext, file: MemoryFile) -> object:
    request = DeleteFile(
        scope="user", area="notes", name="tea", expected_version=file.version
    )
    return await delete_file(request, context)


@pytest.mark.parametrize(
    "mutate",
    [_create_other, _replace, _append, _replace_fact, _delete],
    ids=["create", "write", "append", "replace", "delete"],
)
async def test_get_memory_index_cache_is_invalidated_by_every_write(
    mutate: Mutation,
) -> None:
    """A cached index is dropped by any write through the use cases."""
    context = make_context(index_cache=MemoryIndexCache(ttl=60, clock=lambda: 0.0))
    file = await create(context, "old")
    cached = await get_memory_index(GetMemoryIndex(), context)
    await put(context.storage, "user/notes/behind-the-cache")
    assert await get_memory_index(GetMemoryIndex(), context) == cached

    await mutate(context, file)

    index = await get_memory_index(GetMemoryIndex(), context)
    assert index != cached
    assert "user/notes/behind-the-cache" in paths(index)


async def test_get_memory_index_cache_expires_after_its_ttl() -> None:
    """A cached listing is re-read from storage once the TTL has passed."""
    now = [0.0]
    cache = MemoryIndexCache(ttl=30, clock=lambda: now[0])
    context = make_context(index_cache=cache)
    await create(context, "x")
    await get_memory_index(GetMemoryIndex(), context)
    await put(context.storage, "user/notes/behind-the-cache")

    now[0] = 30.0
    index = await get_memory_index(GetMemoryIndex(), context)

    assert "user/notes/behind-the-cache" in paths(index)


async def test_get_memory_index_never_caches_a_listing_older_than_a_write() -> None:
    """A write landing while the index lists storage is not masked afterwards."""
    storage = ScriptedStorage()
    context = make_context(
        storage=storage, index_cache=MemoryIndexCache(ttl=60, clock=lambda: 0.0)
    )
    storage.after_lists = [lambda: create(context, "x", name="during")]

    during = await get_memory_index(GetMemoryIndex(), context)
    after = await get_memory_index(GetMemoryIndex(), context)

    assert paths(during) == []
    assert paths(after) == ["user/notes/during"]
