"""Expiry through the use cases: set on write, kept by edits, gone at its instant."""

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits, file_key
from app.features.memory.schemas import (
    AppendLine,
    DeleteFile,
    GetMemoryIndex,
    ListPrefix,
    ReadFile,
    ReplaceFact,
    WriteFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.get_memory_index_if_changed import (
    get_memory_index_if_changed,
)
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.replace_fact import replace_fact
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext

from .conftest import START, make_context

LINE = "- [stated] Likes tea.\n"


class SetClock:
    """A clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> SetClock:
    return SetClock()


@pytest.fixture
def storage() -> MemoryStorage:
    return MemoryStorage()


def context_at(
    clock: SetClock, storage: MemoryStorage, grants: tuple[str, ...] = ()
) -> AppContext:
    limits = MemoryLimits(area_ttl={"scratch": 3600})
    extra = grants or ("user=alice:owner", "team=t-1:member")
    return make_context(storage=storage, clock=clock, limits=limits, grants=extra)


def write(
    area: str = "notes", expected: str | None = None, **expiry: object
) -> WriteFile:
    return WriteFile.model_validate(
        {
            "scope": "user",
            "area": area,
            "name": "tea",
            "content": LINE,
            "description": "",
            "aliases": [],
            "expected_version": expected,
            **expiry,
        }
    )


async def test_ttl_sets_expires_at_and_the_file_vanishes_at_that_instant(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """Until expires_at the file is everywhere; from it, nowhere."""
    context = context_at(clock, storage)
    written = await write_file(write(ttl_seconds=60), context)
    assert written.expires_at == "2026-03-01T12:01:00Z"
    assert (
        await read_file(ReadFile(scope="user", area="notes", name="tea"), context)
    ).expires_at == written.expires_at

    clock.now = START + timedelta(seconds=60)

    with pytest.raises(AppError) as raised:
        await read_file(ReadFile(scope="user", area="notes", name="tea"), context)
    assert raised.value.code == "MEMORY_NOT_FOUND"
    listing = await list_prefix(ListPrefix(scope="user"), context)
    assert listing.entries == []
    assert (await get_memory_index(GetMemoryIndex(), context)).entries == []


async def test_a_create_only_write_replaces_an_expired_file(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """An expired file is no file: creating it again succeeds, without expiry."""
    context = context_at(clock, storage)
    await write_file(write(ttl_seconds=1), context)
    clock.now = START + timedelta(seconds=1)

    again = await write_file(write(), context)

    assert again.expires_at is None
    assert "expires_at" not in again.model_dump()


async def test_edits_keep_the_expiry_and_a_whole_write_keeps_or_clears_it(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """Append and replace keep it; a write keeps it unless it names one."""
    context = context_at(clock, storage)
    moment = datetime(2026, 3, 2, tzinfo=UTC)
    first = await write_file(write(expires_at=moment.isoformat()), context)
    assert first.expires_at == "2026-03-02T00:00:00Z"
    appended = await append_line(
        AppendLine(
            scope="user",
            area="notes",
            name="tea",
            line="- [stated] Green.",
            expected_version=first.version,
        ),
        context,
    )
    replaced = await replace_fact(
        ReplaceFact(
            scope="user",
            area="notes",
            name="tea",
            old_string="Green",
            new_string="Oolong",
            expected_version=appended.version,
        ),
        context,
    )
    kept = await write_file(write(expected=replaced.version), context)
    cleared = await write_file(write(expected=kept.version, expires_at=None), context)

    assert [appended.expires_at, replaced.expires_at, kept.expires_at] == [
        first.expires_at
    ] * 3
    assert cleared.expires_at is None


async def test_an_area_default_applies_to_new_files_only(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """WENCHANG_AREA_TTL's area gets its lifetime; a write's own wins."""
    context = context_at(clock, storage)

    scratch = await write_file(write(area="scratch"), context)
    own = await write_file(write(area="notes", ttl_seconds=5), context)

    assert scratch.expires_at == "2026-03-01T13:00:00Z"
    assert own.expires_at == "2026-03-01T12:00:05Z"


async def test_both_expires_at_and_ttl_are_refused(
    clock: SetClock, storage: MemoryStorage
) -> None:
    context = context_at(clock, storage)
    with pytest.raises(AppError) as raised:
        await write_file(write(ttl_seconds=5, expires_at=None), context)
    assert raised.value.details["argument"] == "expires_at"
    assert ": give expires_at or ttl_seconds, not both." in str(raised.value)


async def test_include_expired_shows_owners_and_refuses_others(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """Owners may ask to see an expired file; members get role_required."""
    owner = context_at(clock, storage)
    await write_file(write(ttl_seconds=1), owner)
    clock.now = START + timedelta(seconds=5)

    shown = await read_file(
        ReadFile(scope="user", area="notes", name="tea", include_expired=True), owner
    )
    listed = await list_prefix(ListPrefix(scope="user", include_expired=True), owner)
    member = context_at(clock, storage, ("user=alice:member",))
    with pytest.raises(AppError) as raised:
        await read_file(
            ReadFile(scope="user", area="notes", name="tea", include_expired=True),
            member,
        )

    assert shown.expires_at == "2026-03-01T12:00:01Z"
    assert [entry.name for entry in listed.entries] == ["tea"]
    assert raised.value.code == "RESTRICTED_SCOPE"
    assert raised.value.details["reason"] == "role_required"
    assert raised.value.details["required_roles"] == ["owner"]


async def test_an_edit_of_an_expired_file_finds_no_file(
    clock: SetClock, storage: MemoryStorage
) -> None:
    context = context_at(clock, storage)
    first = await write_file(write(ttl_seconds=1), context)
    clock.now = START + timedelta(seconds=1)
    with pytest.raises(AppError) as raised:
        await append_line(
            AppendLine(
                scope="user",
                area="notes",
                name="tea",
                line="- [stated] Green.",
                expected_version=first.version,
            ),
            context,
        )
    assert raised.value.code == "MEMORY_NOT_FOUND"


async def test_a_delete_of_an_expired_file_finds_no_file_and_deletes_nothing(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """An expired file is none to a delete, even at the version it had."""
    context = context_at(clock, storage)
    first = await write_file(write(ttl_seconds=1), context)
    clock.now = START + timedelta(seconds=1)
    request = DeleteFile(
        scope="user", area="notes", name="tea", expected_version=first.version
    )

    with pytest.raises(AppError) as raised:
        await delete_file(request, context)

    assert raised.value.code == "MEMORY_NOT_FOUND"
    assert (await storage.get(file_key("user", "alice", "notes", "tea"))) is not None


async def test_the_index_tag_moves_when_a_file_expires(
    clock: SetClock, storage: MemoryStorage
) -> None:
    """A held index tag is no longer current once one of its files expired."""
    context = context_at(clock, storage)
    await write_file(write(ttl_seconds=60), context)
    before = await get_memory_index_if_changed(frozenset(), GetMemoryIndex(), context)

    unchanged = await get_memory_index_if_changed(
        {before.tag}, GetMemoryIndex(), context
    )
    clock.now = START + timedelta(seconds=60)
    after = await get_memory_index_if_changed({before.tag}, GetMemoryIndex(), context)

    assert unchanged.tag == before.tag
    assert after.tag != before.tag
    assert after.built is not None and after.built.rows == []


async def test_a_whole_write_over_an_expired_file_finds_no_file(
    clock: SetClock, storage: MemoryStorage
) -> None:
    context = context_at(clock, storage)
    first = await write_file(write(ttl_seconds=1), context)
    assert first.description == ""
    clock.now = START + timedelta(seconds=1)
    with pytest.raises(AppError) as raised:
        await write_file(write(expected=first.version), context)
    assert raised.value.code == "MEMORY_NOT_FOUND"


async def test_an_expires_at_with_an_offset_is_kept_in_utc_in_any_local_zone(
    clock: SetClock, storage: MemoryStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An expires_at given at +08:00, on a machine whose zone is +08:00 too."""
    monkeypatch.setenv("TZ", "XYZ-8")
    time.tzset()
    try:
        given = datetime(2026, 3, 1, 21, 0, tzinfo=timezone(timedelta(hours=8)))
        written = await write_file(write(expires_at=given), context_at(clock, storage))
    finally:
        monkeypatch.undo()
        time.tzset()
    stored = await storage.get(file_key("user", "alice", "notes", "tea"))
    assert stored is not None and stored.metadata.expires_at is not None
    assert stored.metadata.expires_at.utcoffset() == timedelta(0)
    assert written.expires_at == "2026-03-01T13:00:00Z"
