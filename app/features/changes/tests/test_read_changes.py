"""read_changes over MemoryStorage: order, isolation, cursors, retention."""

from datetime import timedelta

import pytest
from tenchi.errors import AppError

from app.features.changes.schemas import ReadChanges
from app.features.changes.use_cases.newest_change import newest_change
from app.features.changes.use_cases.read_changes import read_changes
from app.features.memory.schemas import DeleteFile, PurgeMemory
from app.features.memory.tests.conftest import (
    START,
    ScriptedStorage,
    TickingClock,
    as_identity,
    create,
    make_context,
)
from app.features.memory.tests.requests import append_request, write_request
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.purge_memory import purge_memory
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.storage import MemoryStorage
from app.shared.errors import backend_unavailable, cursor_expired, invalid_argument


async def test_changes_list_each_landed_mutation_in_order_without_content() -> None:
    context = make_context()
    created = await create(context, "- [stated] Secret tea.\n")
    appended = await append_line(append_request(created.version), context)
    gone = await delete_file(
        DeleteFile(
            scope="user", area="notes", name="tea", expected_version=appended.version
        ),
        context,
    )
    assert gone is not None
    page = await read_changes(ReadChanges(scope="user"), context)
    assert [c.operation for c in page.changes] == [
        "write_file",
        "append_line",
        "delete_file",
    ]
    assert [c.version for c in page.changes[:2]] == [created.version, appended.version]
    assert {(c.scope, c.area, c.name, c.actor) for c in page.changes} == {
        ("user", "notes", "tea", "http")
    }
    assert "Secret" not in page.model_dump_json()
    assert page.next_cursor == page.changes[-1].cursor
    rest = await read_changes(
        ReadChanges(scope="user", after=page.next_cursor), context
    )
    assert rest.changes == [] and rest.next_cursor == page.next_cursor
    middle = await read_changes(
        ReadChanges(scope="user", after=page.changes[0].cursor), context
    )
    assert middle.changes == page.changes[1:]


async def test_a_caller_reads_only_its_own_entity_in_that_scope() -> None:
    alice = make_context()
    bob = as_identity(alice, "user=bob:owner", "team=t-1:member")
    await create(alice, name="mine")
    await create(bob, name="his")
    await write_file(write_request(scope="team", name="shared"), alice)
    alice_page = await read_changes(ReadChanges(scope="user"), alice)
    bob_page = await read_changes(ReadChanges(scope="user"), bob)
    team_page = await read_changes(ReadChanges(scope="team"), bob)
    assert [c.name for c in alice_page.changes] == ["mine"]
    assert [c.name for c in bob_page.changes] == ["his"]
    assert [c.name for c in team_page.changes] == ["shared"]
    with pytest.raises(AppError) as raised:  # alice's cursor is not bob's
        await read_changes(ReadChanges(scope="user", after=alice_page.next_cursor), bob)
    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "cursor"


@pytest.mark.parametrize("cursor", ["", "nonsense", "MQ.notatag", "x" * 300])
async def test_a_cursor_the_feed_never_issued_is_invalid(cursor: str) -> None:
    with pytest.raises(AppError) as raised:
        await read_changes(ReadChanges(scope="user", after=cursor), make_context())
    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "cursor"


async def test_newest_change_starts_after_what_already_landed() -> None:
    context = make_context()
    await create(context, name="before")
    now = await newest_change(ReadChanges(scope="user"), context)
    await create(context, name="after")
    page = await read_changes(ReadChanges(scope="user", after=now), context)
    assert [c.name for c in page.changes] == ["after"]


async def test_a_cursor_older_than_the_retention_is_expired() -> None:
    clock = TickingClock(START, timedelta(days=2))
    context = make_context(clock=clock)
    first = await create(context)
    early = await read_changes(ReadChanges(scope="user"), context)
    await append_line(append_request(first.version), context)
    for name in ("two", "three", "four", "five", "six"):
        await create(context, name=name)
    with pytest.raises(AppError) as raised:
        await read_changes(ReadChanges(scope="user", after=early.next_cursor), context)
    assert raised.value.definition is cursor_expired
    assert raised.value.definition.status == 410
    kept = await read_changes(ReadChanges(scope="user"), context)
    # Writes prune what is older than 7 days: the oldest, on tea, are gone.
    names = [c.name for c in kept.changes]
    assert "tea" not in names and names[-1] == "six"


async def test_a_cursor_is_expired_once_the_entity_was_scrubbed() -> None:
    storage = MemoryStorage()
    context = make_context(storage=storage)
    await create(context)
    page = await read_changes(ReadChanges(scope="user"), context)
    await storage.scrub("user/alice/")
    with pytest.raises(AppError) as raised:
        await read_changes(ReadChanges(scope="user", after=page.next_cursor), context)
    assert raised.value.definition is cursor_expired


async def test_a_cursor_from_before_a_purge_stays_expired_after_new_writes() -> None:
    """The log begun after purge_memory reuses no number a cursor holds."""
    context = make_context()
    for name in ("tea", "coffee"):
        await write_file(write_request(name=name), context)
    before = await read_changes(ReadChanges(scope="user"), context)
    purge = PurgeMemory(scope="user", entity_id="alice", dry_run=False)
    await purge_memory(purge, context)
    for name in ("one", "two", "three"):
        await write_file(write_request(name=name), context)
    with pytest.raises(AppError) as raised:
        await read_changes(ReadChanges(scope="user", after=before.next_cursor), context)
    assert raised.value.definition is cursor_expired
    restart = await read_changes(ReadChanges(scope="user"), context)
    assert [c.name for c in restart.changes] == ["one", "two", "three"]


async def test_storage_without_a_change_log_is_unavailable_for_the_feed() -> None:
    """GCS keeps no change log yet; ScriptedStorage has none either."""
    context = make_context(storage=ScriptedStorage())
    with pytest.raises(AppError) as raised:
        await read_changes(ReadChanges(scope="user"), context)
    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "unsupported"
