import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import AppendLine, ReadFile
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    oversize_write,
    restricted_scope,
    version_conflict,
)

from .conftest import (
    LOCATION,
    ScriptedStorage,
    assert_error,
    create,
    make_context,
    rewrite,
    snapshot,
)
from .requests import LINE
from .requests import append_request as request


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
