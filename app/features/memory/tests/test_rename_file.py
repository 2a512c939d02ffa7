import pytest
from tenchi.errors import AppError

from app.features.changes.schemas import ReadChanges
from app.features.changes.use_cases.read_changes import read_changes
from app.features.memory.schemas import (
    ListVersions,
    ReadFile,
    ReadVersion,
    RenameFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.list_versions import list_versions
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.read_version import read_version
from app.features.memory.use_cases.rename_file import rename_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    restricted_scope,
    version_conflict,
)

from .conftest import assert_error, create, snapshot
from .requests import append_request


def request(
    version: str, *, area: str = "projects", name: str = "chai", old: str = "tea"
) -> RenameFile:
    return RenameFile(
        scope="user",
        area="notes",
        name=old,
        new_area=area,
        new_name=name,
        expected_version=version,
    )


def where(area: str, name: str) -> ReadFile:
    return ReadFile(scope="user", area=area, name=name)


async def test_rename_file_moves_content_metadata_and_history(
    context: AppContext,
) -> None:
    """The file answers at its new path only, with a new version and its history."""
    first = await create(
        context, "- [stated] Green.\n", description="Tea", aliases=["t"]
    )
    second = await append_line(
        append_request(first.version, "- [stated] Hot."), context
    )

    moved = await rename_file(request(second.version), context)

    assert (moved.area, moved.name, moved.content) == (
        "projects",
        "chai",
        second.content,
    )
    assert (moved.description, moved.aliases) == ("Tea", ["t"])
    assert moved.version not in {first.version, second.version}
    assert await read_file(where("projects", "chai"), context) == moved
    with pytest.raises(AppError) as caught:
        await read_file(where("notes", "tea"), context)
    assert caught.value.definition is memory_not_found
    history = await list_versions(
        ListVersions(scope="user", area="projects", name="chai"), context
    )
    assert [(v.version, v.operation) for v in history.entries] == [
        (moved.version, "rename_file"),
        (second.version, "append_line"),
        (first.version, "write_file"),
    ]
    old = await read_version(
        ReadVersion(scope="user", area="projects", name="chai", version=first.version),
        context,
    )
    assert old.file.content == "- [stated] Green.\n"


async def test_rename_file_logs_the_old_and_the_new_path(context: AppContext) -> None:
    """Feed readers see the old path go and the new one arrive."""
    first = await create(context, "x")

    moved = await rename_file(request(first.version), context)

    page = await read_changes(ReadChanges(scope="user"), context)
    assert [(c.operation, c.area, c.name, c.version) for c in page.changes] == [
        ("write_file", "notes", "tea", first.version),
        ("rename_file", "notes", "tea", moved.version),
        ("rename_file", "projects", "chai", moved.version),
    ]


async def test_rename_file_onto_an_existing_file_is_a_conflict_naming_it(
    context: AppContext,
) -> None:
    """Nothing moves; the conflict carries the destination's content and version."""
    first = await create(context, "mine")
    there = await create(context, "theirs", area="projects", name="chai")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), context)

    assert_error(
        caught.value,
        version_conflict,
        error="VersionConflictError",
        category="recoverable",
        content="theirs",
        version=there.version,
        scope="user",
        area="projects",
        name="chai",
    )
    assert await snapshot(context.storage) == before


async def test_rename_file_with_a_stale_version_is_a_conflict(
    context: AppContext,
) -> None:
    first = await create(context, "one")
    second = await append_line(
        append_request(first.version, "- [stated] Two."), context
    )
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as caught:
        await rename_file(request(first.version), context)

    assert caught.value.definition is version_conflict
    assert caught.value.details["version"] == second.version
    assert caught.value.details["area"] == "notes"
    assert await snapshot(context.storage) == before


async def test_rename_file_of_a_missing_file_is_not_found(context: AppContext) -> None:
    with pytest.raises(AppError) as caught:
        await rename_file(request("v1"), context)
    assert caught.value.definition is memory_not_found


async def test_rename_file_onto_itself_or_into_system_is_refused(
    context: AppContext,
) -> None:
    first = await create(context, "x")
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as same:
        await rename_file(request(first.version, area="notes", name="tea"), context)
    with pytest.raises(AppError) as system:
        await rename_file(request(first.version, area="system"), context)

    assert same.value.definition is invalid_argument
    assert system.value.definition is restricted_scope
    assert await snapshot(context.storage) == before


async def test_rename_file_back_keeps_one_history(context: AppContext) -> None:
    """Moving a file away and back leaves every record at the path it ends on."""
    first = await create(context, "x")
    away = await rename_file(request(first.version), context)
    back = await rename_file(
        RenameFile(
            scope="user",
            area="projects",
            name="chai",
            new_area="notes",
            new_name="tea",
            expected_version=away.version,
        ),
        context,
    )

    history = await list_versions(
        ListVersions(scope="user", area="notes", name="tea"), context
    )
    assert [v.version for v in history.entries] == [
        back.version,
        away.version,
        first.version,
    ]
    with pytest.raises(AppError) as caught:
        await list_versions(
            ListVersions(scope="user", area="projects", name="chai"), context
        )
    assert caught.value.details["reason"] == "file_absent"
