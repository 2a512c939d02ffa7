import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import Deleted, DeleteFile, ReadFile
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    restricted_scope,
    version_conflict,
)

from .conftest import (
    LOCATION,
    ScriptedStorage,
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
    expected_version: str, *, area: str = "notes", name: str = "tea"
) -> DeleteFile:
    return DeleteFile(
        scope="user", area=area, name=name, expected_version=expected_version
    )


async def test_delete_file_at_the_current_version_removes_it(
    context: AppContext,
) -> None:
    """The file is gone; a sibling keeps its content, metadata and version."""
    sibling = await create(context, "stay", name="coffee")
    doomed = await create(context, "go")

    deleted = await delete_file(request(doomed.version), context)

    assert deleted == Deleted()
    assert deleted.model_dump() == {"ok": True}
    assert (
        await read_file(ReadFile(scope="user", area="notes", name="coffee"), context)
        == sibling
    )
    with pytest.raises(AppError) as caught:
        await read_file(ReadFile(**LOCATION), context)
    assert caught.value.definition is memory_not_found


async def test_delete_file_with_a_stale_version_is_a_version_conflict(
    context: AppContext,
) -> None:
    """A stale version keeps the file and reports its current state."""
    first = await create(context, "one")
    await delete_file(request(first.version), context)
    second = await create(context, "two")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await delete_file(request(first.version), context)

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


async def test_delete_file_of_a_missing_file_is_file_absent(
    context: AppContext,
) -> None:
    """Deleting what is not there (including a repeat) is NotFound."""
    first = await create(context, "x")
    await delete_file(request(first.version), context)

    with pytest.raises(AppError) as caught:
        await delete_file(request(first.version), context)

    assert_error(
        caught.value,
        memory_not_found,
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )


async def test_delete_file_then_create_makes_a_fresh_version(
    context: AppContext,
) -> None:
    """A re-created file never reuses the deleted file's version."""
    first = await create(context, "x")
    await delete_file(request(first.version), context)

    again = await create(context, "x")

    assert again.version != first.version


async def test_delete_file_conflicts_with_a_write_that_races_it() -> None:
    """A write landing before the guarded delete keeps the file and is reported."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "mine")
    storage.races = [rewrite("theirs")]

    with pytest.raises(AppError) as caught:
        await delete_file(request(first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["content"] == "theirs"
    assert (await read_file(ReadFile(**LOCATION), context)).content == "theirs"


async def test_delete_file_raced_by_another_delete_is_file_absent() -> None:
    """A file deleted by someone else first is NotFound."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    first = await create(context, "mine")
    storage.races = [remove()]

    with pytest.raises(AppError) as caught:
        await delete_file(request(first.version), context)

    assert caught.value.details["reason"] == "file_absent"


async def test_delete_file_in_system_is_restricted(context: AppContext) -> None:
    """Curated files cannot be deleted through the agent surfaces."""
    version = await seed_system(context.storage, "rules")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await delete_file(request(version, area="system", name="rules"), context)

    assert_error(
        caught.value,
        restricted_scope,
        error="RestrictedScopeError",
        category="permanent",
        reason="system_read_only",
        scope="user",
        area="system",
        name="rules",
    )
    assert await snapshot(context.storage) == before


async def test_delete_file_in_a_role_gated_scope_is_restricted() -> None:
    """A member cannot delete in a scope only admins may write."""
    context = make_context(write_roles={"team": ["admin"]})
    admin = as_identity(context, "team=t-1:admin")
    written = await create(admin, "x", scope="team")

    with pytest.raises(AppError) as caught:
        await delete_file(
            DeleteFile(
                scope="team", area="notes", name="tea", expected_version=written.version
            ),
            context,
        )

    assert caught.value.details["reason"] == "role_required"
    assert caught.value.details["required_roles"] == ["admin"]


async def test_delete_file_of_another_entity_is_file_absent(
    context: AppContext,
) -> None:
    """Bob's delete at alice's version cannot reach alice's file."""
    written = await create(context, "alice's")
    bob = as_identity(context, "user=bob:owner")

    with pytest.raises(AppError) as caught:
        await delete_file(request(written.version), bob)

    assert caught.value.definition is memory_not_found
    assert (await read_file(ReadFile(**LOCATION), context)) == written


async def test_delete_file_with_a_bad_name_is_invalid_argument(
    context: AppContext,
) -> None:
    """The location is checked before storage."""
    with pytest.raises(AppError) as caught:
        await delete_file(request("1", name=".."), context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == "name"


async def test_delete_file_with_a_version_not_utf8_blames_expected_version(
    context: AppContext,
) -> None:
    """A lone surrogate in the version names its argument; nothing is deleted."""
    await create(context)
    before = await snapshot(context.storage)
    # Built past its validators: the use case checks the version itself.
    empty = DeleteFile.model_construct(**LOCATION, expected_version="\ud800")

    with pytest.raises(AppError) as caught:
        await delete_file(empty, context)

    assert caught.value.definition is invalid_argument
    assert caught.value.details["argument"] == "expected_version"
    assert await snapshot(context.storage) == before
