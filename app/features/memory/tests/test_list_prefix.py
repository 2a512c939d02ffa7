from datetime import UTC, datetime

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.ports import FileMetadata, Write
from app.features.memory.schemas import ListPrefix, ReadFile
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.errors import invalid_argument

from .conftest import (
    ScriptedStorage,
    as_identity,
    create,
    make_context,
    seed_system,
)
from .listings import list_all, paged_context, paths


async def test_list_prefix_lists_a_whole_scope_in_code_point_order(
    context: AppContext,
) -> None:
    """Keys sort by code point, so `a-b` lists before `a` (GCS order)."""
    for area, name in [
        ("a", "x"),
        ("b", "x"),
        ("a-b", "x"),
        ("a", "x-y"),
        ("a", "é"),
        ("a", "e"),
        ("a", "日"),
        ("a", "Z"),
    ]:
        await create(context, "c", area=area, name=name)

    listing = await list_prefix(ListPrefix(scope="user"), context)

    assert paths(listing) == [
        "a-b/x",
        "a/Z",
        "a/e",
        "a/x-y",
        "a/x",
        "a/é",
        "a/日",
        "b/x",
    ]
    assert listing.next_cursor is None


async def test_list_prefix_entries_are_file_objects_without_content(
    context: AppContext,
) -> None:
    """An entry carries everything a read does except the content."""
    await create(context, "body", description="Drinks", aliases=["cha"])

    listing = await list_prefix(ListPrefix(scope="user", area="notes"), context)

    read = await read_file(ReadFile(scope="user", area="notes", name="tea"), context)
    assert [entry.model_dump() for entry in listing.entries] == [
        read.model_dump(exclude={"content"})
    ]


async def test_list_prefix_of_an_area_stays_inside_it(context: AppContext) -> None:
    """An area listing is segment-aligned: `note` does not include `notes`."""
    await create(context, "x", area="note", name="one")
    await create(context, "x", area="notes", name="two")

    listing = await list_prefix(ListPrefix(scope="user", area="note"), context)

    assert paths(listing) == ["note/one"]


async def test_list_prefix_includes_the_system_area(context: AppContext) -> None:
    """Curated files are listed like any other."""
    await seed_system(context.storage, "rules")

    listing = await list_prefix(ListPrefix(scope="user"), context)

    assert paths(listing) == ["system/rules"]


async def test_list_prefix_skips_keys_that_are_not_memory_files(
    context: AppContext,
) -> None:
    """Objects that are not `area/name.md` are never rendered."""
    meta = FileMetadata("", (), (), datetime(2026, 1, 1, tzinfo=UTC))
    await context.storage.put(Write("user/alice/notes/stray.txt", b"x", meta))
    await context.storage.put(Write("user/alice/notes/deep/er.md", b"x", meta))
    await create(context, "x")

    listing = await list_prefix(ListPrefix(scope="user"), context)

    assert paths(listing) == ["notes/tea"]


async def test_list_prefix_pages_by_the_page_size() -> None:
    """Five files at page size 2 come as 2, 2, 1, each exactly once, ascending."""
    context = paged_context()
    for name in "edcba":
        await create(context, "x", name=name)

    first = await list_prefix(ListPrefix(scope="user"), context)
    assert first.next_cursor is not None
    second = await list_prefix(
        ListPrefix(scope="user", cursor=first.next_cursor), context
    )
    assert second.next_cursor is not None
    third = await list_prefix(
        ListPrefix(scope="user", cursor=second.next_cursor), context
    )

    assert [paths(first), paths(second), paths(third)] == [
        ["notes/a", "notes/b"],
        ["notes/c", "notes/d"],
        ["notes/e"],
    ]
    assert third.next_cursor is None


async def test_list_prefix_has_no_trailing_empty_page() -> None:
    """A last page that is exactly full has no next cursor."""
    context = paged_context()
    for name in "abcd":
        await create(context, "x", name=name)

    first = await list_prefix(ListPrefix(scope="user"), context)
    second = await list_prefix(
        ListPrefix(scope="user", cursor=first.next_cursor), context
    )

    assert paths(second) == ["notes/c", "notes/d"]
    assert second.next_cursor is None


async def test_list_prefix_is_not_a_snapshot() -> None:
    """A file written after the cursor shows up on a later page, never twice."""
    context = paged_context()
    for name in "abcd":
        await create(context, "x", name=name)
    first = await list_prefix(ListPrefix(scope="user"), context)

    await create(context, "x", name="bb")
    rest = await list_prefix(
        ListPrefix(scope="user", cursor=first.next_cursor), context
    )

    assert paths(first) == ["notes/a", "notes/b"]
    assert paths(rest) == ["notes/bb", "notes/c"]


async def test_list_prefix_with_an_empty_cursor_starts_over() -> None:
    """An empty cursor means no cursor."""
    context = paged_context()
    for name in "abc":
        await create(context, "x", name=name)

    listing = await list_prefix(ListPrefix(scope="user", cursor=""), context)

    assert paths(listing) == ["notes/a", "notes/b"]


async def test_list_prefix_never_reads_file_bodies() -> None:
    """Listing uses metadata only; storage.get is never called."""
    storage = ScriptedStorage()
    context = make_context(storage=storage, limits=MemoryLimits(list_page_size=1))
    for name in "ab":
        await create(context, "x", name=name)
    gets = storage.gets

    assert await list_all(context) == ["notes/a", "notes/b"]

    assert storage.gets == gets


async def test_list_prefix_never_shows_another_entity(context: AppContext) -> None:
    """Bob's listing of the same scope holds only bob's files."""
    await create(context, "alice's", name="alice-only")
    bob = as_identity(context, "user=bob:owner")
    await create(bob, "bob's", name="bob-only")

    listing = await list_prefix(ListPrefix(scope="user"), bob)

    assert paths(listing) == ["notes/bob-only"]


@pytest.mark.parametrize(
    ("scope", "area", "argument"),
    [("org", "Notes", "scope"), ("user", "Notes", "area"), ("user", "..", "area")],
)
async def test_list_prefix_of_a_bad_scope_or_area_is_invalid(
    context: AppContext, scope: str, area: str, argument: str
) -> None:
    """The grant is checked before the area slug."""
    with pytest.raises(AppError) as caught:
        await list_prefix(ListPrefix(scope=scope, area=area), context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == argument
