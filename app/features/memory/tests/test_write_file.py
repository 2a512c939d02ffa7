from datetime import timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import ReadFile, WriteFile
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import (
    file_quota_exceeded,
    invalid_argument,
    memory_not_found,
    oversize_write,
    restricted_scope,
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
    remove,
    rewrite,
    seed_system,
    snapshot,
)


def request(
    content: str = "- [stated] Likes tea.\n",
    expected_version: str | None = None,
    *,
    scope: str = "user",
    area: str = "notes",
    name: str = "tea",
    description: str = "Drinks",
    aliases: list[str] | None = None,
) -> WriteFile:
    return WriteFile(
        scope=scope,
        area=area,
        name=name,
        content=content,
        description=description,
        aliases=aliases if aliases is not None else ["cha"],
        expected_version=expected_version,
    )


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


@pytest.mark.parametrize(
    ("content", "size"),
    [("x" * 101, 101), ("€" * 34, 102)],
    ids=["ascii", "multibyte"],
)
async def test_write_file_over_the_byte_limit_is_oversize(
    content: str, size: int
) -> None:
    """The limit counts UTF-8 bytes, not characters, and nothing is written."""
    context = make_context(limits=MemoryLimits(max_file_bytes=100))

    with pytest.raises(AppError) as caught:
        await write_file(request(content), context)

    assert_error(
        caught.value,
        oversize_write,
        error="OversizeWriteError",
        category="recoverable",
        size=size,
        limit=100,
        **LOCATION,
    )
    assert await snapshot(context.storage) == []


async def test_write_file_at_exactly_the_byte_limit_succeeds() -> None:
    """The limit is inclusive, and metadata does not count toward it."""
    context = make_context(limits=MemoryLimits(max_file_bytes=100))

    written = await write_file(
        request("€" * 33 + "x", description="d" * 500, aliases=["a" * 500]), context
    )

    assert len(written.content.encode()) == 100


async def test_write_file_oversize_is_reported_before_a_stale_version() -> None:
    """Size is checked before storage, so it wins over a stale version."""
    context = make_context(limits=MemoryLimits(max_file_bytes=10))
    await create(context, "small")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await write_file(request("x" * 11, "stale"), context)

    assert caught.value.definition is oversize_write
    assert await snapshot(context.storage) == before


@pytest.mark.parametrize("description", ["two\nlines", "cr\rhere", "para\u2029sep"])
async def test_write_file_with_a_multiline_description_is_invalid(
    context: AppContext, description: str
) -> None:
    """A description is one line; any line break is rejected before storage."""
    with pytest.raises(AppError) as caught:
        await write_file(request(description=description), context)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="description",
    )
    assert await snapshot(context.storage) == []


async def test_write_file_to_the_system_area_is_restricted(
    context: AppContext,
) -> None:
    """system/ is curated: writes are refused permanently."""
    with pytest.raises(AppError) as caught:
        await write_file(request(area="system"), context)

    assert_error(
        caught.value,
        restricted_scope,
        error="RestrictedScopeError",
        category="permanent",
        reason="system_read_only",
        scope="user",
        area="system",
        name="tea",
    )


async def test_write_file_to_a_role_gated_scope_lists_required_roles() -> None:
    """Without a permitted role the write is refused, naming the roles sorted."""
    context = make_context(write_roles={"team": ["owner", "admin"]})

    with pytest.raises(AppError) as caught:
        await write_file(request(scope="team"), context)

    assert_error(
        caught.value,
        restricted_scope,
        error="RestrictedScopeError",
        category="permanent",
        reason="role_required",
        required_roles=["admin", "owner"],
        scope="team",
        area="notes",
        name="tea",
    )
    assert await snapshot(context.storage) == []


async def test_write_file_to_a_role_gated_scope_with_the_role_succeeds() -> None:
    """A caller holding a permitted role writes normally."""
    context = make_context(
        grants=["team=t-1:admin"], write_roles={"team": ["owner", "admin"]}
    )

    written = await write_file(request(scope="team"), context)

    assert written.scope == "team"


async def test_write_file_to_system_with_bad_arguments_is_still_restricted() -> None:
    """Write permission is checked before the remaining arguments."""
    context = make_context(limits=MemoryLimits(max_file_bytes=5))

    with pytest.raises(AppError) as caught:
        await write_file(
            request("x" * 50, "stale", area="system", description="a\nb"), context
        )

    assert caught.value.details["reason"] == "system_read_only"


async def test_write_file_with_a_bad_name_in_system_is_invalid_name(
    context: AppContext,
) -> None:
    """Name characters are checked before write permission."""
    with pytest.raises(AppError) as caught:
        await write_file(request(area="system", name="a\u200bb"), context)

    assert caught.value.details["argument"] == "name"


@pytest.mark.parametrize(
    ("scope", "area", "name", "argument"),
    [
        ("org", "Bad Area", "..", "scope"),
        ("user", "..", "..", "area"),
        ("user", "Notes", "a\u200bb", "area"),
        ("user", "Notes", "..", "name"),
        ("user", "Notes", "a/b", "name"),
    ],
    ids=[
        "grant-before-area",
        "bad-area-before-bad-name",
        "slug-before-name-characters",
        "path-before-slug",
        "separator-before-slug",
    ],
)
async def test_write_file_reports_the_first_failing_check(
    context: AppContext, scope: str, area: str, name: str, argument: str
) -> None:
    """grant -> path (area, then name) -> area slug -> name characters."""
    with pytest.raises(AppError) as caught:
        await write_file(request(scope=scope, area=area, name=name), context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == argument


async def test_write_file_create_beyond_the_entity_cap_is_refused() -> None:
    """At max_files_per_entity non-system files, a create fails with the limit."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=2))
    await create(context, "1", name="one")
    await create(context, "2", area="people", name="two")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await write_file(request(), context)

    assert_error(
        caught.value,
        file_quota_exceeded,
        error="FileQuotaExceededError",
        category="recoverable",
        limit=2,
        **LOCATION,
    )
    assert await snapshot(context.storage) == before


async def test_write_file_cap_does_not_count_system_files() -> None:
    """Curated system/ files never use up the entity's quota."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=2))
    await seed_system(context.storage, "rules")
    await seed_system(context.storage, "style")
    await create(context, "1", name="one")

    written = await write_file(request(), context)

    assert written.name == "tea"


async def test_write_file_cap_counts_only_the_callers_entity() -> None:
    """Another entity's files in the same scope do not count."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=1))
    bob = as_identity(context, "user=bob:owner")
    await create(bob, "bob's", name="bob")

    written = await write_file(request(), context)

    assert written.name == "tea"


async def test_write_file_replace_at_the_cap_succeeds() -> None:
    """The cap limits creates only; replacing a file at the cap is fine."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=1))
    first = await create(context, "one")

    second = await write_file(request("two", first.version), context)

    assert second.content == "two"


async def test_write_file_create_of_an_existing_file_at_the_cap_conflicts() -> None:
    """At the cap, re-creating an existing file is a conflict, not a quota error."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=1))
    existing = await create(context, "one")

    with pytest.raises(AppError) as caught:
        await write_file(request("two"), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["version"] == existing.version


async def test_write_file_with_a_zero_cap_never_limits_creates() -> None:
    """max_files_per_entity = 0 means no cap."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=0))
    for number in range(5):
        await create(context, "x", name=f"n{number}")

    written = await write_file(request(), context)

    assert written.name == "tea"


async def test_write_file_metadata_over_budget_is_invalid_aliases() -> None:
    """Description plus aliases over the metadata budget is refused before storage."""
    context = make_context()
    aliases = ["x" * 500] * 13

    with pytest.raises(AppError) as raised:
        await write_file(
            WriteFile(
                scope="user",
                area="notes",
                name="big",
                content="",
                description="",
                aliases=aliases,
                expected_version=None,
            ),
            context,
        )

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "aliases"
    assert await context.storage.count("") == 0
