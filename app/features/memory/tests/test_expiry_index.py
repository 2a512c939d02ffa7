"""include_expired on the index: owners of every granted scope, tags of its own."""

from datetime import timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import GetMemoryIndex
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.get_memory_index_if_changed import (
    get_memory_index_if_changed,
)
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.storage import MemoryStorage

from .conftest import START
from .test_expiry import SetClock, context_at, write

SHOWN = GetMemoryIndex(include_expired=True)
OWNER = ("user=alice:owner", "team=t-1:owner")


async def expired_file(clock: SetClock, storage: MemoryStorage) -> None:
    await write_file(write(ttl_seconds=1), context_at(clock, storage, OWNER))
    clock.now = START + timedelta(seconds=5)


async def test_an_owner_of_every_scope_sees_expired_files_in_the_index() -> None:
    clock, storage = SetClock(), MemoryStorage()
    await expired_file(clock, storage)
    owner = context_at(clock, storage, OWNER)

    shown = await get_memory_index(SHOWN, owner)
    hidden = await get_memory_index(GetMemoryIndex(), owner)

    assert [(e.name, e.expires_at) for e in shown.entries] == [
        ("tea", "2026-03-01T12:00:01Z")
    ]
    assert hidden.entries == []


async def test_a_member_of_any_granted_scope_is_refused_role_required() -> None:
    clock, storage = SetClock(), MemoryStorage()
    await expired_file(clock, storage)
    member = context_at(clock, storage, ("user=alice:owner", "team=t-1:member"))

    with pytest.raises(AppError) as raised:
        await get_memory_index(SHOWN, member)
    with pytest.raises(AppError) as conditional:
        await get_memory_index_if_changed(frozenset(), SHOWN, member)

    assert raised.value.code == conditional.value.code == "RESTRICTED_SCOPE"
    assert raised.value.details["reason"] == "role_required"
    assert raised.value.details["scope"] == "team"


async def test_the_owners_view_and_the_default_view_never_share_a_tag() -> None:
    """With no expired file both views hold the same files, yet their tags
    differ, so a tag held for one is never answered 304 for the other."""
    clock, storage = SetClock(), MemoryStorage()
    owner = context_at(clock, storage, OWNER)
    await write_file(write(), owner)

    default = await get_memory_index_if_changed(frozenset(), GetMemoryIndex(), owner)
    shown = await get_memory_index_if_changed({default.tag}, SHOWN, owner)
    again = await get_memory_index_if_changed({shown.tag}, SHOWN, owner)
    back = await get_memory_index_if_changed({shown.tag}, GetMemoryIndex(), owner)

    assert shown.tag != default.tag and shown.built is not None
    assert again.tag == shown.tag and again.built is None
    assert back.tag == default.tag and back.built is not None


async def test_the_owners_tag_stays_when_a_file_expires() -> None:
    """The owner's view lists expired files too, so expiry alone changes
    nothing in it: its held tag stays current."""
    clock, storage = SetClock(), MemoryStorage()
    owner = context_at(clock, storage, OWNER)
    await write_file(write(ttl_seconds=60), owner)
    before = await get_memory_index_if_changed(frozenset(), SHOWN, owner)

    clock.now = START + timedelta(seconds=61)
    after = await get_memory_index_if_changed({before.tag}, SHOWN, owner)

    assert after.tag == before.tag and after.built is None
