from dataclasses import replace

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import AppendLine, ReadFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    oversize_write,
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
    rewrite,
    snapshot,
)

LINE = "- [stated] Prefers green tea."


def request(
    expected_version: str,
    line: str = LINE,
    *,
    area: str = "notes",
    aliases: list[str] | None = None,
    description: str | None = None,
) -> AppendLine:
    return AppendLine(
        scope="user",
        area=area,
        name="tea",
        line=line,
        expected_version=expected_version,
        aliases=aliases,
        description=description,
    )


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


async def test_append_line_result_over_the_limit_is_oversize() -> None:
    """The byte limit applies to the resulting content; nothing is written."""
    context = make_context(limits=MemoryLimits(max_file_bytes=len(LINE) + 1))
    first = await create(context, "x")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await append_line(request(first.version), context)

    assert_error(
        caught.value,
        oversize_write,
        error="OversizeWriteError",
        category="recoverable",
        size=len(LINE) + 3,
        limit=len(LINE) + 1,
        **LOCATION,
    )
    assert await snapshot(context.storage) == before


async def test_append_line_result_at_exactly_the_limit_succeeds() -> None:
    """The limit is inclusive."""
    context = make_context(limits=MemoryLimits(max_file_bytes=len(LINE) + 3))
    first = await create(context, "x")

    appended = await append_line(request(first.version), context)

    assert len(appended.content.encode()) == len(LINE) + 3


async def test_append_line_succeeds_when_its_own_write_landed() -> None:
    """A precondition failure over exactly this call's write is its landed retry."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "# Tea\n")
    storage.lose_acks = True

    appended = await append_line(
        request(first.version, aliases=["cha"], description="Tea"), context
    )

    stored = await read_file(ReadFile(**LOCATION), context)
    assert appended == stored
    assert stored.content == f"# Tea\n{LINE}\n"
    assert (stored.aliases, stored.description) == (["cha"], "Tea")
    assert storage.conditional_puts == 2


async def test_append_line_conflicts_when_another_write_won() -> None:
    """A failed precondition over someone else's write is a conflict, not success."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "# Tea\n")
    storage.races = [rewrite("# Theirs\n")]

    with pytest.raises(AppError) as caught:
        await append_line(request(first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == "# Theirs\n"
    assert storage.conditional_puts == 2


async def test_append_line_with_a_lost_ack_over_another_write_conflicts() -> None:
    """Landed-retry detection compares bytes and metadata, never just the status."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "# Tea\n")
    storage.lose_acks = True
    storage.races = [rewrite("# Theirs\n")]

    with pytest.raises(AppError) as caught:
        await append_line(request(first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == "# Theirs\n"


async def test_append_line_with_a_lost_ack_over_equal_bytes_conflicts() -> None:
    """Equal bytes with other metadata are someone else's write, not this call's."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "# Tea\n")
    storage.lose_acks = True
    storage.races = [rewrite(f"# Tea\n{LINE}\n")]

    with pytest.raises(AppError) as caught:
        await append_line(request(first.version, description="Mine"), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == f"# Tea\n{LINE}\n"


async def test_append_line_to_system_is_restricted_before_the_line_is_checked(
    context: AppContext,
) -> None:
    """Write permission comes before the remaining arguments."""
    with pytest.raises(AppError) as caught:
        await append_line(request("1", "not a fact", area="system"), context)

    assert caught.value.definition is restricted_scope
    assert caught.value.details["reason"] == "system_read_only"


async def test_append_line_to_a_role_gated_scope_is_restricted() -> None:
    """A member cannot append in a scope only admins may write."""
    context = make_context(write_roles={"team": ["admin"]})

    with pytest.raises(AppError) as caught:
        await append_line(
            AppendLine(
                scope="team", area="notes", name="tea", line=LINE, expected_version="1"
            ),
            context,
        )

    assert caught.value.details["reason"] == "role_required"
    assert caught.value.details["required_roles"] == ["admin"]


async def test_append_line_checks_the_line_before_the_description(
    context: AppContext,
) -> None:
    """Remaining arguments are checked in order: line, version, aliases, description."""
    with pytest.raises(AppError) as caught:
        await append_line(request("1", "prose", description="a\nb"), context)

    assert caught.value.details["argument"] == "line"


async def test_append_line_checks_arguments_before_storage(
    context: AppContext,
) -> None:
    """A bad description is reported even when the file is missing."""
    with pytest.raises(AppError) as caught:
        await append_line(request("1", description="a\nb"), context)

    assert caught.value.details["argument"] == "description"


async def test_append_line_merged_aliases_over_budget_change_nothing(
    context: AppContext,
) -> None:
    """Aliases that would grow the metadata past its budget are refused."""
    first = await create(context, aliases=[char * 500 for char in "abcdefgh"])
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as raised:
        extra = [char * 500 for char in "ijklmnop"]
        await append_line(request(first.version, aliases=extra), context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "aliases"
    assert await snapshot(context.storage) == before
