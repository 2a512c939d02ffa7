from datetime import timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import ReadFile
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import (
    memory_not_found,
    version_conflict,
)

from .conftest import (
    LOCATION,
    START,
    ScriptedStorage,
    TickingClock,
    as_identity,
    assert_error,
    create,
    make_context,
    recreate,
    remove,
    rewrite,
    snapshot,
)
from .requests import write_request as request


async def test_write_file_creates_a_file_when_expected_version_is_none(
    context: AppContext,
) -> None:
    """A create stamps the clock, records the surface and returns a version."""
    written = await write_file(request(), context)

    assert written.model_dump(exclude={"version"}) == {
        "scope": "user",
        "area": "notes",
        "name": "tea",
        "content": "- [stated] Likes tea.\n",
        "description": "Drinks",
        "aliases": ["cha"],
        "sources": ["http"],
        "last_updated": "2026-03-01T12:00:00Z",
    }
    assert written.version
    assert await read_file(ReadFile(**LOCATION), context) == written


async def test_write_file_create_on_an_existing_file_is_a_version_conflict(
    context: AppContext,
) -> None:
    """Creating over an existing file conflicts and carries its content and version."""
    existing = await create(context, "first")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await write_file(request("second"), context)

    assert_error(
        caught.value,
        version_conflict,
        error="VersionConflictError",
        category="recoverable",
        content="first",
        version=existing.version,
        **LOCATION,
    )
    assert caught.value.headers == {"ETag": f'"{existing.version}"'}
    assert await snapshot(context.storage) == before


async def test_write_file_with_the_current_version_replaces_the_file(
    context: AppContext,
) -> None:
    """A replace takes the new content, description and aliases whole."""
    first = await create(context, "old", description="Old", aliases=["a", "b"])

    second = await write_file(
        request("new", first.version, description="New", aliases=["c"]), context
    )

    assert second.version != first.version
    assert (second.content, second.description, second.aliases) == ("new", "New", ["c"])
    assert second.last_updated == "2026-03-01T12:00:01Z"


async def test_write_file_with_empty_aliases_clears_them(context: AppContext) -> None:
    """write_file replaces the alias list; it never merges."""
    first = await create(context, "x", aliases=["a"])

    second = await write_file(request("x", first.version, aliases=[]), context)

    assert second.aliases == []


async def test_write_file_with_a_stale_version_is_a_version_conflict(
    context: AppContext,
) -> None:
    """A stale version conflicts with the current state; nothing changes."""
    first = await create(context, "one")
    second = await write_file(request("two", first.version), context)
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await write_file(request("three", first.version), context)

    assert_error(
        caught.value,
        version_conflict,
        error="VersionConflictError",
        category="recoverable",
        content="two",
        version=second.version,
        **LOCATION,
    )
    assert await snapshot(context.storage) == before


async def test_write_file_with_a_never_issued_version_is_a_version_conflict(
    context: AppContext,
) -> None:
    """Versions are opaque: an invented one is simply not current."""
    await create(context, "one")

    with pytest.raises(AppError) as caught:
        await write_file(request("two", "not-a-version"), context)

    assert caught.value.definition is version_conflict


async def test_write_file_with_a_version_against_a_missing_file_is_file_absent(
    context: AppContext,
) -> None:
    """A replace of a file that does not exist is NotFound and creates nothing."""
    with pytest.raises(AppError) as caught:
        await write_file(request("x", "1"), context)

    assert_error(
        caught.value,
        memory_not_found,
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )
    assert await snapshot(context.storage) == []


async def test_write_file_conflicts_with_a_write_that_races_it() -> None:
    """A write landing between the read and the put is reported, never overwritten."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "mine")
    storage.races = [rewrite("theirs")]

    with pytest.raises(AppError) as caught:
        await write_file(request("ours", first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == "theirs"
    assert (await read_file(ReadFile(**LOCATION), context)).content == "theirs"


async def test_write_file_reports_file_absent_when_a_race_deletes_it() -> None:
    """A file deleted between the read and the put is NotFound, not recreated."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "mine")
    storage.races = [remove()]

    with pytest.raises(AppError) as caught:
        await write_file(request("ours", first.version), context)

    assert caught.value.details["reason"] == "file_absent"
    assert await snapshot(storage) == []


async def test_write_file_create_that_loses_to_a_file_deleted_at_once_creates() -> None:
    """A create beaten by a file that is deleted before the conflict is read is
    tried again: delete-then-create explains it, "absent" would not."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    await create(context, "theirs")
    storage.after_puts = [remove()]

    written = await write_file(request("ours"), context)

    assert storage.conditional_puts == 3  # the first create, the lost one, the retry
    assert await read_file(ReadFile(**LOCATION), context) == written
    assert written.content == "ours"


async def test_write_file_create_gives_up_after_three_lost_creates() -> None:
    """A file created and deleted around every attempt: three creates, then the
    state as it is (absent), never a loop."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    await create(context, "theirs")
    storage.races = [recreate("again") for _ in range(3)]
    storage.after_puts = [remove() for _ in range(3)]

    with pytest.raises(AppError) as caught:
        await write_file(request("ours"), context)

    assert caught.value.details["reason"] == "file_absent"
    assert storage.conditional_puts == 4


async def test_write_file_records_the_token_label_as_source() -> None:
    """A token label, when set, is the source a write records."""
    context = make_context(label="claude-desktop")

    written = await write_file(request(), context)

    assert written.sources == ["claude-desktop"]


async def test_write_file_unions_sources_across_writers() -> None:
    """Sources only grow and are rendered sorted, whoever writes next."""
    desktop = make_context(label="claude-desktop", surface="mcp")
    first = await create(desktop, "x")
    mcp = as_identity(desktop, "user=alice:owner")

    second = await write_file(request("y", first.version), mcp)
    third = await write_file(request("z", second.version), desktop)

    assert second.sources == ["claude-desktop", "mcp"]
    assert third.sources == ["claude-desktop", "mcp"]


async def test_write_file_stamps_microseconds_only_when_non_zero() -> None:
    """last_updated is UTC with Z, and six fractional digits only when needed."""
    clock = TickingClock(START + timedelta(microseconds=120), timedelta(seconds=1))
    context = make_context(clock=clock)

    first = await create(context, "x")
    clock.now = START + timedelta(seconds=9) - clock.step
    second = await write_file(request("y", first.version), context)

    assert first.last_updated == "2026-03-01T12:00:00.000120Z"
    assert second.last_updated == "2026-03-01T12:00:09Z"
