import json

import pytest

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import (
    GetMemoryIndex,
    MemoryIndex,
)
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.get_memory_index_if_changed import (
    get_memory_index_if_changed,
)
from app.server.context import AppContext
from app.server.http.index_route import index_json

from .conftest import ScriptedStorage, as_identity, create, make_context
from .index_files import THREE_SCOPES, budget, capped, paths, put


async def test_get_memory_index_lists_every_granted_scope(context: AppContext) -> None:
    """Entries cover every granted scope and the index is complete."""
    written = await create(context, "x", description="Drinks", aliases=["cha"])
    await create(context, "y", scope="team", area="people", name="bo")

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == ["team/people/bo", "user/notes/tea"]
    assert index.entries[1].model_dump() == written.model_dump(exclude={"content"})
    assert index.capped == []


async def test_get_memory_index_orders_system_then_priority_then_the_rest() -> None:
    """system/ first across scopes, then scope_priority, then one tier; newest first."""
    context = make_context(
        grants=THREE_SCOPES, limits=MemoryLimits(scope_priority=("team", "user"))
    )
    for path, seconds in [
        ("user/system/old-rules", 0),
        ("user/notes/u-old", 1),
        ("team/notes/t", 2),
        ("org/system/rules", 3),
        ("org/notes/o", 4),
        ("user/notes/u-new", 5),
    ]:
        await put(context.storage, path, seconds=seconds)

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == [
        "org/system/rules",
        "user/system/old-rules",
        "team/notes/t",
        "user/notes/u-new",
        "user/notes/u-old",
        "org/notes/o",
    ]


async def test_get_memory_index_follows_the_order_of_scope_priority() -> None:
    """Listed scopes rank in the listed order, whatever their recency."""
    context = make_context(
        grants=THREE_SCOPES, limits=MemoryLimits(scope_priority=("org", "user"))
    )
    await put(context.storage, "user/notes/u", seconds=9)
    await put(context.storage, "team/notes/t", seconds=8)
    await put(context.storage, "org/notes/o", seconds=1)

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == ["org/notes/o", "user/notes/u", "team/notes/t"]


async def test_get_memory_index_puts_unlisted_scopes_in_one_tier() -> None:
    """Scopes missing from scope_priority interleave by recency, not by name."""
    context = make_context(
        grants=THREE_SCOPES, limits=MemoryLimits(scope_priority=("team",))
    )
    await put(context.storage, "user/notes/old", seconds=1)
    await put(context.storage, "org/notes/mid", seconds=2)
    await put(context.storage, "user/notes/new", seconds=3)

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == ["user/notes/new", "org/notes/mid", "user/notes/old"]


async def test_get_memory_index_breaks_ties_by_path() -> None:
    """Equal timestamps order by path in code-point order (`a-b` before `a`)."""
    context = make_context(grants=THREE_SCOPES)
    for path in ["user/a/x", "org/b/x", "user/a-b/x", "user/a/x-y"]:
        await put(context.storage, path)

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == ["org/b/x", "user/a-b/x", "user/a/x-y", "user/a/x"]


async def test_get_memory_index_orders_by_microseconds() -> None:
    """One microsecond newer is newer."""
    context = make_context()
    await put(context.storage, "user/notes/older", seconds=0.000001)
    await put(context.storage, "user/notes/newer", seconds=0.000002)

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == ["user/notes/newer", "user/notes/older"]
    assert index.entries[0].last_updated == "2026-03-01T12:00:00.000002Z"


ENTRY = (
    '{"scope":"user","area":"notes","name":"a","version":"1","description":"茶",'
    '"aliases":[],"sources":["http"],"last_updated":"2026-03-01T12:00:00Z"}'
)


async def test_get_memory_index_entry_cost_is_compact_utf8_json() -> None:
    """An entry costs its compact, unescaped UTF-8 JSON; exactly that budget fits."""
    context = budget(len(ENTRY.encode()))
    await put(context.storage, "user/notes/a", description="茶")

    index = await get_memory_index(GetMemoryIndex(), context)

    assert [json.loads(ENTRY)] == [entry.model_dump() for entry in index.entries]
    assert index.capped == []


async def test_get_memory_index_budget_one_byte_short_caps_the_entry() -> None:
    """The budget is inclusive: one byte less and the entry is omitted."""
    context = budget(len(ENTRY.encode()) - 1)
    await put(context.storage, "user/notes/a", description="茶")

    index = await get_memory_index(GetMemoryIndex(), context)

    assert index.entries == []
    assert capped(index) == [("user", "notes", 1)]


async def test_get_memory_index_stops_at_the_first_entry_that_does_not_fit() -> None:
    """Entries are a prefix of the order; a smaller later entry is not pulled in."""
    context = budget(len(ENTRY.encode()) * 2)
    await put(context.storage, "user/notes/a", seconds=3, description="茶")
    await put(context.storage, "user/notes/b", seconds=2, description="x" * 500)
    await put(context.storage, "user/notes/c", seconds=1, description="茶")

    index = await get_memory_index(GetMemoryIndex(), context)

    assert paths(index) == ["user/notes/a"]
    assert capped(index) == [("user", "notes", 2)]


async def test_get_memory_index_counts_capped_rows_by_scope_then_area() -> None:
    """Omitted files are counted per area, rows sorted by scope, then area."""
    context = budget(1)
    for seconds, path in enumerate(
        [
            "org/system/a",
            "team/alpha/a",
            "user/about/a",
            "team/zeta/a",
            "user/notes/b",
            "user/notes/a",
        ]
    ):
        await put(context.storage, path, seconds=seconds)

    index = await get_memory_index(GetMemoryIndex(), context)

    assert index.entries == []
    assert capped(index) == [
        ("org", "system", 1),
        ("team", "alpha", 1),
        ("team", "zeta", 1),
        ("user", "about", 1),
        ("user", "notes", 2),
    ]


@pytest.mark.parametrize("limit", [0, 200, 1_000_000])
async def test_get_memory_index_body_is_the_index_models_own_json(limit: int) -> None:
    """The body written while budgeting is byte for byte the model's JSON.

    Empty, capped and complete indexes alike, non-ASCII and escapes included.
    """
    context = budget(limit)
    await put(context.storage, "user/notes/a", seconds=3, description='茶 "q"\n')
    await put(context.storage, "org/system/b", seconds=2, description="\u2028x")
    await put(context.storage, "team/alpha/c", seconds=1, description="\\ é")

    answer = await get_memory_index_if_changed(frozenset(), GetMemoryIndex(), context)

    assert answer.built is not None
    index, body = answer.built.index, index_json(answer.built)
    assert index == await get_memory_index(GetMemoryIndex(), context)
    assert body == index.model_dump_json().encode()
    assert MemoryIndex.model_validate_json(body) == index


async def test_get_memory_index_never_shows_another_entity(context: AppContext) -> None:
    """Bob's index holds bob's files only, though both use scope user."""
    await create(context, "alice's", name="alice-only")
    bob = as_identity(context, "user=bob:owner")
    await create(bob, "bob's", name="bob-only")

    index = await get_memory_index(GetMemoryIndex(), bob)

    assert paths(index) == ["user/notes/bob-only"]


async def test_get_memory_index_without_grants_is_empty() -> None:
    """An identity with no grants sees an empty, complete index."""
    context = make_context(grants=())

    index = await get_memory_index(GetMemoryIndex(), context)

    assert index == MemoryIndex(entries=[], capped=[])


async def test_get_memory_index_never_reads_file_bodies() -> None:
    """The index is built from listings; storage.get is never called."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    await create(context, "x")
    gets = storage.gets

    await get_memory_index(GetMemoryIndex(), context)

    assert storage.gets == gets
