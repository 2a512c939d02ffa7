"""read_version and restore_version: refusals that name their argument, and
the sources a restore keeps."""

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import (
    DeleteFile,
    ListVersions,
    ReadVersion,
    RestoreVersion,
    SweepExpired,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.list_versions import list_versions
from app.features.memory.use_cases.read_version import read_version
from app.features.memory.use_cases.restore_version import restore_version
from app.features.memory.use_cases.sweep_expired import sweep_expired
from app.server.context import AppContext
from app.shared.errors import invalid_argument

from .conftest import LOCATION, create, make_context, snapshot
from .requests import append_request


async def test_read_version_blames_a_version_that_is_not_utf8(
    context: AppContext,
) -> None:
    await create(context)
    # Built past its validators: the use case checks the text itself.
    bad = ReadVersion(**LOCATION, version="1").model_copy(update={"version": "\ud800"})

    with pytest.raises(AppError) as raised:
        await read_version(bad, context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "version"


async def test_restore_version_blames_a_version_that_is_not_utf8(
    context: AppContext,
) -> None:
    first = await create(context)
    before = await snapshot(context.storage)
    request = RestoreVersion(**LOCATION, version="1", expected_version=first.version)
    bad = request.model_copy(update={"version": "\ud800"})

    with pytest.raises(AppError) as raised:
        await restore_version(bad, context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "version"
    assert await snapshot(context.storage) == before


async def test_a_version_with_a_slash_is_refused_naming_it(
    context: AppContext,
) -> None:
    await create(context)

    with pytest.raises(AppError) as raised:
        await read_version(ReadVersion(**LOCATION, version="a/b"), context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "version"
    assert "'a/b'" in str(raised.value)


async def test_restoring_a_delete_record_says_which_version_to_restore(
    context: AppContext,
) -> None:
    first = await create(context)
    await delete_file(DeleteFile(**LOCATION, expected_version=first.version), context)
    tombstone = (await list_versions(ListVersions(**LOCATION), context)).entries[0]

    with pytest.raises(AppError) as raised:
        await restore_version(
            RestoreVersion(
                **LOCATION, version=tombstone.version, expected_version=None
            ),
            context,
        )

    assert "no content; restore a version listed before it. This" in str(raised.value)


async def test_a_restore_of_a_deleted_file_keeps_its_sources() -> None:
    """Nothing is current to hold them: the restored version's, and the restorer's."""
    kettle = make_context(label="kettle")
    first = await create(kettle, "# Old\n")
    await delete_file(DeleteFile(**LOCATION, expected_version=first.version), kettle)
    tray = make_context(storage=kettle.storage, label="tray")

    restored = await restore_version(
        RestoreVersion(**LOCATION, version=first.version, expected_version=None),
        tray,
    )

    assert restored.sources == ["kettle", "tray"]


async def test_a_sweep_of_an_entity_without_a_scope_says_why() -> None:
    with pytest.raises(AppError) as raised:
        await sweep_expired(SweepExpired(entity_id="alice"), make_context())

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "scope"
    assert "invalid: entity_id names an entity of a scope. This" in str(raised.value)


async def test_append_line_blames_an_expected_version_that_is_not_utf8(
    context: AppContext,
) -> None:
    first = await create(context)
    before = await snapshot(context.storage)
    request = append_request(first.version)
    bad = request.model_copy(update={"expected_version": "\ud800"})

    with pytest.raises(AppError) as raised:
        await append_line(bad, context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "expected_version"
    assert await snapshot(context.storage) == before
