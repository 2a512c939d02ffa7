from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import ReadFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    version_conflict,
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
from .requests import LINE
from .requests import append_request as request


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("# Tea\n", f"# Tea\n{LINE}\n"),
        ("# Tea", f"# Tea\n{LINE}\n"),
        ("", f"{LINE}\n"),
        ("# Tea\n\n", f"# Tea\n\n{LINE}\n"),
        ("a\r\n", f"a\r\n{LINE}\n"),
    ],
    ids=["trailing-newline", "no-trailing-newline", "empty", "blank-line", "crlf"],
)
async def test_append_line_separates_with_one_newline_only_when_needed(
    context: AppContext, content: str, expected: str
) -> None:
    """A `\\n` goes before the line only if the body lacks one, and after it always."""
    first = await create(context, content)

    appended = await append_line(request(first.version), context)

    assert appended.content == expected
    assert appended.version != first.version
    assert await read_file(ReadFile(**LOCATION), context) == appended


@pytest.mark.parametrize("label", ["stated", "observed", "inferred", "system"])
async def test_append_line_accepts_every_confidence_label(
    context: AppContext, label: str
) -> None:
    """Each of the four labels makes a fact line."""
    first = await create(context)

    appended = await append_line(request(first.version, f"- [{label}] X"), context)

    assert appended.content == f"- [{label}] X\n"


@pytest.mark.parametrize(
    "line",
    [
        "",
        "Prefers tea",
        "- [guess] Prefers tea",
        "- [Stated] Prefers tea",
        "- [stated]Prefers tea",
        "- [stated] ",
        "- [stated]    ",
        "-  [stated] Prefers tea",
        "  - [stated] Prefers tea",
        "* [stated] Prefers tea",
        "- [stated] Prefers tea\n",
        "- [stated] one\n- [stated] two",
    ],
)
async def test_append_line_rejects_anything_but_one_fact_line(
    context: AppContext, line: str
) -> None:
    """Only `- [label] text` with non-blank text and no newline is appended."""
    first = await create(context, "x\n")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await append_line(request(first.version, line), context)

    assert_error(
        caught.value,
        invalid_argument,
        error="InvalidArgumentError",
        category="recoverable",
        argument="line",
    )
    assert await snapshot(context.storage) == before


async def test_append_line_to_a_missing_file_is_file_absent(
    context: AppContext,
) -> None:
    """append_line never creates a file."""
    with pytest.raises(AppError) as caught:
        await append_line(request("1"), context)

    assert_error(
        caught.value,
        memory_not_found,
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )
    assert await snapshot(context.storage) == []


async def test_append_line_with_a_stale_version_is_a_version_conflict(
    context: AppContext,
) -> None:
    """A stale version conflicts with the current content and version."""
    first = await create(context, "- [stated] One.\n")
    second = await append_line(request(first.version, "- [stated] Two."), context)
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await append_line(request(first.version), context)

    assert_error(
        caught.value,
        version_conflict,
        error="VersionConflictError",
        category="recoverable",
        content="- [stated] One.\n- [stated] Two.\n",
        version=second.version,
        **LOCATION,
    )
    assert await snapshot(context.storage) == before


async def test_append_line_twice_at_successive_versions_appends_twice(
    context: AppContext,
) -> None:
    """Deliberate repeats are kept: the version, not the text, guards a write."""
    first = await create(context)

    second = await append_line(request(first.version), context)
    third = await append_line(request(second.version), context)

    assert third.content == f"{LINE}\n{LINE}\n"


async def test_append_line_adds_aliases_without_removing_or_repeating(
    context: AppContext,
) -> None:
    """Stored aliases stay as stored; only new ones are added, in the given order."""
    first = await create(context, aliases=["x", "x", "y"])

    appended = await append_line(
        request(first.version, aliases=["z", "y", "w", "z"]), context
    )

    assert appended.aliases == ["x", "x", "y", "z", "w"]


@pytest.mark.parametrize("aliases", [None, []])
async def test_append_line_without_aliases_keeps_them(
    context: AppContext, aliases: list[str] | None
) -> None:
    """No aliases (or an empty list) leaves the stored aliases unchanged."""
    first = await create(context, aliases=["x"], description="Old")

    appended = await append_line(request(first.version, aliases=aliases), context)

    assert (appended.aliases, appended.description) == (["x"], "Old")


@pytest.mark.parametrize("description", ["New", ""])
async def test_append_line_with_a_description_replaces_it(
    context: AppContext, description: str
) -> None:
    """A given description, even an empty one, replaces the stored one."""
    first = await create(context, description="Old", aliases=["x"])

    appended = await append_line(
        request(first.version, description=description), context
    )

    assert (appended.description, appended.aliases) == (description, ["x"])


async def test_append_line_adds_its_source_and_stamps_the_clock() -> None:
    """Every mutation unions its source and refreshes last_updated."""
    context = make_context(label="claude-desktop")
    mcp = replace(context, identity=make_identity(*ALICE), surface="mcp")
    first = await create(mcp)

    appended = await append_line(request(first.version), context)

    assert first.sources == ["mcp"]
    assert appended.sources == ["claude-desktop", "mcp"]
    assert appended.last_updated == "2026-03-01T12:00:01Z"
