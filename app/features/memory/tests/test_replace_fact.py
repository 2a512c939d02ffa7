from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import ReadFile
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    oversize_write,
    replace_fact_match,
    restricted_scope,
)

from .conftest import (
    ALICE,
    LOCATION,
    assert_error,
    create,
    make_context,
    make_identity,
    snapshot,
)
from .requests import FACTS
from .requests import replace_request as request


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


@pytest.mark.parametrize("argument", ["new_string", "expected_version"])
async def test_replace_fact_blames_the_argument_that_is_not_utf8(
    context: AppContext, argument: str
) -> None:
    """A lone surrogate names its argument; nothing is written."""
    first = await create(context, FACTS)
    before = await snapshot(context.storage)
    # Built past its validators: the use case checks the text itself.
    bad = request(first.version).model_copy(update={argument: "\ud800"})

    with pytest.raises(AppError) as raised:
        await replace_fact(bad, context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == argument
    assert await snapshot(context.storage) == before
