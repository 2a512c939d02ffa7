from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import ReadFile, ReplaceFact
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    oversize_write,
    replace_fact_match,
    restricted_scope,
    version_conflict,
)

from .conftest import (
    ALICE,
    LOCATION,
    ScriptedStorage,
    assert_error,
    create,
    make_context,
    make_identity,
    remove,
    rewrite,
    snapshot,
)

FACTS = "# Tea\n- [stated] Likes green tea.\n- [stated] Dislikes coffee.\n"


def request(
    expected_version: str,
    old_string: str = "green",
    new_string: str = "oolong",
    *,
    area: str = "notes",
    aliases: list[str] | None = None,
    description: str | None = None,
) -> ReplaceFact:
    return ReplaceFact(
        scope="user",
        area=area,
        name="tea",
        old_string=old_string,
        new_string=new_string,
        expected_version=expected_version,
        aliases=aliases,
        description=description,
    )


async def test_replace_fact_replaces_the_one_matching_span(
    context: AppContext,
) -> None:
    """Exactly the quoted span changes; every other byte stays."""
    first = await create(context, FACTS)

    replaced = await replace_fact(request(first.version), context)

    assert replaced.content == FACTS.replace("green", "oolong")
    assert replaced.version != first.version
    assert await read_file(ReadFile(**LOCATION), context) == replaced


async def test_replace_fact_can_span_lines_and_keeps_crlf(context: AppContext) -> None:
    """Matching is exact: no newline or Unicode normalisation."""
    first = await create(context, "- [stated] Grüner Tee\r\n- [stated] Kaffee\r\n")

    replaced = await replace_fact(
        request(first.version, "Tee\r\n- [stated] Kaffee", "Tee"), context
    )

    assert replaced.content == "- [stated] Grüner Tee\r\n"


async def test_replace_fact_with_empty_new_string_deletes_the_span(
    context: AppContext,
) -> None:
    """An empty new_string removes the quoted text, e.g. a whole fact line."""
    first = await create(context, FACTS)

    replaced = await replace_fact(
        request(first.version, "- [stated] Dislikes coffee.\n", ""), context
    )

    assert replaced.content == "# Tea\n- [stated] Likes green tea.\n"


@pytest.mark.parametrize(
    ("content", "old_string", "count"),
    [
        (FACTS, "matcha", 0),
        (FACTS, "- [stated]", 2),
        ("aaa", "aa", 2),
        ("abababa", "aba", 3),
    ],
    ids=["none", "two", "overlapping", "overlapping-three"],
)
async def test_replace_fact_without_a_unique_match_reports_the_count(
    context: AppContext, content: str, old_string: str, count: int
) -> None:
    """0 or ≥2 matches (overlaps count) carry content, version and match_count."""
    first = await create(context, content)
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version, old_string), context)

    assert_error(
        caught.value,
        replace_fact_match,
        error="ReplaceFactMatchError",
        category="recoverable",
        content=content,
        version=first.version,
        match_count=count,
        **LOCATION,
    )
    assert await snapshot(context.storage) == before


async def test_replace_fact_with_empty_old_string_is_invalid(
    context: AppContext,
) -> None:
    """An empty old_string is rejected before storage is read."""
    with pytest.raises(AppError) as caught:
        await replace_fact(request("1", "", "x", description="a\nb"), context)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="old_string",
    )


async def test_replace_fact_of_a_missing_file_is_file_absent(
    context: AppContext,
) -> None:
    """replace_fact never creates a file."""
    with pytest.raises(AppError) as caught:
        await replace_fact(request("1"), context)

    assert_error(
        caught.value,
        memory_not_found,
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )


async def test_replace_fact_with_a_stale_version_reapplies_a_unique_match(
    context: AppContext,
) -> None:
    """A stale caller's edit lands on the current content while the match is unique."""
    first = await create(context, FACTS)
    theirs = await replace_fact(request(first.version, "coffee", "espresso"), context)

    replaced = await replace_fact(request(first.version), context)

    assert replaced.content == (
        "# Tea\n- [stated] Likes oolong tea.\n- [stated] Dislikes espresso.\n"
    )
    assert replaced.version not in (first.version, theirs.version)


async def test_replace_fact_with_a_stale_version_and_no_match_conflicts(
    context: AppContext,
) -> None:
    """Stale and no longer unique is a conflict, never a match error."""
    first = await create(context, FACTS)
    theirs = await replace_fact(request(first.version, "green", "black"), context)

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    assert_error(
        caught.value,
        version_conflict,
        error="VersionConflictError",
        category="recoverable",
        content=theirs.content,
        version=theirs.version,
        **LOCATION,
    )


async def test_replace_fact_with_a_stale_version_and_two_matches_conflicts(
    context: AppContext,
) -> None:
    """A second occurrence added by another writer makes a stale edit conflict."""
    first = await create(context, FACTS)
    theirs = await replace_fact(
        request(first.version, "coffee", "green coffee"), context
    )

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["version"] == theirs.version


async def test_replace_fact_reapplies_after_a_race_that_keeps_the_match() -> None:
    """A write racing the put is absorbed: the edit is re-applied on top of it."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races = [rewrite(FACTS + "- [stated] Races.\n")]

    replaced = await replace_fact(request(first.version), context)

    assert replaced.content == FACTS.replace("green", "oolong") + "- [stated] Races.\n"
    assert storage.conditional_puts == 3


async def test_replace_fact_gives_up_after_three_attempts_with_current_state() -> None:
    """After three lost races the conflict carries the file as it is now."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races = [rewrite(f"{FACTS}{n}") for n in range(3)]

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    current = await read_file(ReadFile(**LOCATION), context)
    assert storage.conditional_puts == 4
    assert current.content == f"{FACTS}2"
    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == current.content
    assert caught.value.details["version"] == current.version


async def test_replace_fact_reports_file_absent_when_a_race_deletes_it() -> None:
    """A file deleted mid-retry is NotFound, not a conflict."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, FACTS)
    storage.races = [remove()]

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version), context)

    assert caught.value.details["reason"] == "file_absent"


async def test_replace_fact_merges_aliases_and_replaces_description(
    context: AppContext,
) -> None:
    """Aliases are added without removal or repeats; a description replaces."""
    first = await create(context, FACTS, description="Old", aliases=["x", "y"])

    replaced = await replace_fact(
        request(first.version, aliases=["y", "z", "z"], description="New"), context
    )

    assert (replaced.aliases, replaced.description) == (["x", "y", "z"], "New")


async def test_replace_fact_without_metadata_arguments_keeps_them(
    context: AppContext,
) -> None:
    """Omitted aliases and description leave the stored ones unchanged."""
    first = await create(context, FACTS, description="Old", aliases=["x"])

    replaced = await replace_fact(request(first.version), context)

    assert (replaced.aliases, replaced.description) == (["x"], "Old")


async def test_replace_fact_with_an_identical_string_is_a_new_version() -> None:
    """old_string == new_string still writes: new version, source and timestamp."""
    context = make_context(label="claude-desktop")
    mcp = replace(context, identity=make_identity(*ALICE), surface="mcp")
    first = await create(mcp, FACTS)

    replaced = await replace_fact(request(first.version, "green", "green"), context)

    assert replaced.content == FACTS
    assert replaced.version != first.version
    assert replaced.sources == ["claude-desktop", "mcp"]
    assert replaced.last_updated == "2026-03-01T12:00:01Z"


async def test_replace_fact_result_over_the_limit_is_oversize() -> None:
    """The byte limit applies to the edited content; nothing is written."""
    context = make_context(limits=MemoryLimits(max_file_bytes=10))
    first = await create(context, "abc")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await replace_fact(request(first.version, "b", "€" * 3), context)

    assert_error(
        caught.value,
        oversize_write,
        error="OversizeWriteError",
        category="recoverable",
        size=11,
        limit=10,
        **LOCATION,
    )
    assert await snapshot(context.storage) == before


async def test_replace_fact_result_at_exactly_the_limit_succeeds() -> None:
    """The limit is inclusive."""
    context = make_context(limits=MemoryLimits(max_file_bytes=10))
    first = await create(context, "abcde")

    replaced = await replace_fact(request(first.version, "b", "€€"), context)

    assert len(replaced.content.encode()) == 10


async def test_replace_fact_in_system_is_restricted_before_arguments(
    context: AppContext,
) -> None:
    """Write permission outranks an empty old_string."""
    with pytest.raises(AppError) as caught:
        await replace_fact(request("1", "", area="system"), context)

    assert caught.value.definition is restricted_scope
    assert caught.value.details["reason"] == "system_read_only"
