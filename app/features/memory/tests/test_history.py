"""The history use cases over the in-memory adapter: list, read and restore."""

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.policy import VERSIONS_CURSOR_HINT
from app.features.memory.schemas import (
    DeleteFile,
    ListVersions,
    ReadVersion,
    RestoreVersion,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.list_versions import list_versions
from app.features.memory.use_cases.read_version import read_version
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.restore_version import restore_version
from app.features.memory.use_cases.write_file import write_file
from app.server.context import AppContext
from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    restricted_scope,
    version_conflict,
)

from .conftest import (
    LOCATION,
    assert_error,
    create,
    five_versions,
    make_context,
    snapshot,
)
from .requests import append_request, replace_request, write_request


async def test_list_versions_names_each_operation_newest_first() -> None:
    """Every write records its operation, its actor and the file's size."""
    context = make_context(label="kettle")
    first = await create(context, "# Tea\n- [stated] Likes green tea.\n")
    appended = await append_line(append_request(first.version), context)
    replaced = await replace_fact(
        replace_request(appended.version, "Likes", "Loves"), context
    )
    rewritten = await write_file(write_request("x", replaced.version), context)
    await delete_file(
        DeleteFile(**LOCATION, expected_version=rewritten.version), context
    )

    listing = await list_versions(ListVersions(**LOCATION), context)

    assert [(e.operation, e.deleted) for e in listing.entries] == [
        ("delete_file", True),
        ("write_file", False),
        ("replace_fact", False),
        ("append_line", False),
        ("write_file", False),
    ]
    assert [e.version for e in listing.entries[1:]] == [
        rewritten.version,
        replaced.version,
        appended.version,
        first.version,
    ]
    assert {e.actor for e in listing.entries} == {"kettle"}
    assert listing.entries[1].size == 1
    assert listing.entries[4].size == len(first.content.encode())
    assert listing.entries[4].at == first.last_updated
    assert listing.next_cursor is None


async def test_list_versions_pages_with_a_cursor_bound_to_the_file() -> None:
    context = make_context(limits=MemoryLimits(list_page_size=2))
    newest_first = await five_versions(context)

    first = await list_versions(ListVersions(**LOCATION), context)
    assert first.next_cursor is not None
    second = await list_versions(
        ListVersions(**LOCATION, cursor=first.next_cursor), context
    )
    assert second.next_cursor is not None
    third = await list_versions(
        ListVersions(**LOCATION, cursor=second.next_cursor), context
    )

    pages = [first, second, third]
    assert [[e.version for e in p.entries] for p in pages] == [
        newest_first[0:2],
        newest_first[2:4],
        newest_first[4:],
    ]
    assert third.next_cursor is None
    await create(context, name="coffee")
    coffee = ListVersions(
        scope="user", area="notes", name="coffee", cursor=first.next_cursor
    )
    with pytest.raises(AppError) as raised:
        await list_versions(coffee, context)
    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "cursor"
    assert VERSIONS_CURSOR_HINT in str(raised.value)


async def test_list_versions_of_a_page_exactly_full_has_no_next_cursor() -> None:
    context = make_context(limits=MemoryLimits(list_page_size=2))
    first = await create(context)
    await write_file(write_request("x", first.version), context)

    listing = await list_versions(ListVersions(**LOCATION), context)

    assert len(listing.entries) == 2
    assert listing.next_cursor is None


async def test_list_versions_of_a_file_never_written_is_not_found(
    context: AppContext,
) -> None:
    with pytest.raises(AppError) as raised:
        await list_versions(ListVersions(**LOCATION), context)

    assert_error(
        raised.value,
        memory_not_found,
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )


async def test_read_version_answers_the_file_as_it_stood(context: AppContext) -> None:
    first = await create(context, "# Tea\n", description="Old", aliases=["cha"])
    now = await write_file(write_request("# New\n", first.version), context)
    await delete_file(DeleteFile(**LOCATION, expected_version=now.version), context)

    old = await read_version(ReadVersion(**LOCATION, version=first.version), context)

    assert old.file == first
    assert (old.version, old.operation, old.deleted) == (
        first.version,
        "write_file",
        False,
    )
    listing = await list_versions(ListVersions(**LOCATION), context)
    gone = await read_version(
        ReadVersion(**LOCATION, version=listing.entries[0].version), context
    )
    assert gone.deleted
    assert gone.file.content == ""
    assert gone.file.description == "Drinks"


@pytest.mark.parametrize("version", ["", "a/b"])
async def test_read_version_refuses_a_version_no_file_can_have(
    context: AppContext, version: str
) -> None:
    await create(context)

    with pytest.raises(AppError) as raised:
        await read_version(ReadVersion(**LOCATION, version=version), context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "version"


async def test_read_version_of_an_unknown_version_is_not_found(
    context: AppContext,
) -> None:
    await create(context)

    with pytest.raises(AppError) as raised:
        await read_version(ReadVersion(**LOCATION, version="v404"), context)

    assert raised.value.definition is memory_not_found
    assert raised.value.details["reason"] == "version_absent"
    assert "'v404'" in str(raised.value)


async def test_restore_version_writes_the_old_content_as_a_new_version() -> None:
    context = make_context(label="kettle")
    first = await create(context, "# Old\n", description="Old", aliases=["cha"])
    bot = make_context(storage=context.storage, label="bot")
    now = await write_file(write_request("# New\n", first.version), bot)

    restored = await restore_version(
        RestoreVersion(**LOCATION, version=first.version, expected_version=now.version),
        context,
    )

    assert restored.content == "# Old\n"
    assert restored.description == "Old"
    assert restored.aliases == ["cha"]
    assert restored.sources == ["bot", "kettle"]
    assert restored.version not in {first.version, now.version}
    listing = await list_versions(ListVersions(**LOCATION), context)
    assert listing.entries[0].operation == "restore_version"
    assert listing.entries[0].actor == "kettle"


async def test_restore_version_brings_back_a_deleted_file(
    context: AppContext,
) -> None:
    first = await create(context, "# Old\n")
    await delete_file(DeleteFile(**LOCATION, expected_version=first.version), context)

    restored = await restore_version(
        RestoreVersion(**LOCATION, version=first.version, expected_version=None),
        context,
    )

    assert restored.content == "# Old\n"


async def test_restore_version_of_a_delete_record_is_refused_and_writes_nothing(
    context: AppContext,
) -> None:
    first = await create(context)
    await delete_file(DeleteFile(**LOCATION, expected_version=first.version), context)
    tombstone = (await list_versions(ListVersions(**LOCATION), context)).entries[0]
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as raised:
        await restore_version(
            RestoreVersion(
                **LOCATION, version=tombstone.version, expected_version=None
            ),
            context,
        )

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "version"
    assert tombstone.version in str(raised.value)
    assert await snapshot(context.storage) == before


async def test_restore_version_with_a_stale_version_conflicts(
    context: AppContext,
) -> None:
    first = await create(context, "# Old\n")
    await write_file(write_request("# New\n", first.version), context)

    with pytest.raises(AppError) as raised:
        await restore_version(
            RestoreVersion(
                **LOCATION, version=first.version, expected_version=first.version
            ),
            context,
        )

    assert raised.value.definition is version_conflict


async def test_restore_version_needs_write_permission(context: AppContext) -> None:
    first = await create(context, scope="team", name="tea")
    reader = make_context(storage=context.storage, grants=("team=t-1:reader",))

    with pytest.raises(AppError) as raised:
        await restore_version(
            RestoreVersion(
                scope="team",
                area="notes",
                name="tea",
                version=first.version,
                expected_version=first.version,
            ),
            reader,
        )

    assert raised.value.definition is restricted_scope
