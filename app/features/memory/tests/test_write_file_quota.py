import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import WriteFile
from app.features.memory.use_cases.write_file import write_file
from app.shared.errors import (
    file_quota_exceeded,
    invalid_argument,
    version_conflict,
)

from .conftest import (
    LOCATION,
    as_identity,
    assert_error,
    create,
    make_context,
    seed_system,
    snapshot,
)
from .requests import write_request as request


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
    """At the cap, re-creating an existing file is a conflict, not a quota error,
    showing the file as it is."""
    context = make_context(limits=MemoryLimits(max_files_per_entity=1))
    existing = await create(context, "one")

    with pytest.raises(AppError) as caught:
        await write_file(request("two"), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["version"] == existing.version
    assert caught.value.details["content"] == "one"


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
