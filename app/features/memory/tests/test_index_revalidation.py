"""The conditional index's tag: what moves it, on storage that reads expiries
apart (as SQLite does) and on storage that lists them."""

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial

from app.features.memory.domain import MemoryLimits
from app.features.memory.domain.index_tags import index_tag
from app.features.memory.policy import granted_prefixes
from app.features.memory.ports.index_reads import cached_listings
from app.features.memory.ports.storage_reads import list_all
from app.features.memory.schemas import GetMemoryIndex
from app.features.memory.use_cases.get_memory_index_if_changed import (
    get_memory_index_if_changed,
)
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.shared.identity import require_identity
from tests.support.contexts import with_services

from .conftest import START
from .test_expiry import SetClock, context_at, write

INDEX = GetMemoryIndex()
NOTHING: frozenset[str] = frozenset()


class ExpiryReadingStorage(MemoryStorage):
    """Memory storage that answers expiry moments apart, as SQLite does."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[list[str]] = []

    async def expiry_moments(self, prefixes: Sequence[str]) -> Sequence[datetime]:
        self.asked.append(list(prefixes))
        listed = [item for p in prefixes for item in await list_all(self, p)]
        return [i.metadata.expires_at for i in listed if i.metadata.expires_at]


async def test_a_write_moves_the_tag() -> None:
    clock, storage = SetClock(), MemoryStorage()
    context = context_at(clock, storage)
    made = await write_file(write(), context)
    before = await get_memory_index_if_changed(NOTHING, INDEX, context)

    await write_file(write(expected=made.version), context)
    after = await get_memory_index_if_changed({before.tag}, INDEX, context)

    assert after.tag != before.tag and after.built is not None


async def test_another_byte_budget_moves_the_tag() -> None:
    """A server restarted with another budget builds another body: no 304."""
    clock, storage = SetClock(), MemoryStorage()
    context = context_at(clock, storage)
    await write_file(write(), context)
    before = await get_memory_index_if_changed(NOTHING, INDEX, context)
    smaller = with_services(context, limits=MemoryLimits(index_max_bytes=4096))

    after = await get_memory_index_if_changed({before.tag}, INDEX, smaller)

    assert after.tag != before.tag and after.built is not None


async def test_storage_reading_expiries_apart_moves_the_tag_at_an_expiry() -> None:
    clock, storage = SetClock(), ExpiryReadingStorage()
    context = context_at(clock, storage)
    await write_file(write(ttl_seconds=60), context)
    before = await get_memory_index_if_changed(NOTHING, INDEX, context)

    clock.now = START + timedelta(seconds=61)
    after = await get_memory_index_if_changed({before.tag}, INDEX, context)

    assert after.tag != before.tag and after.built is not None
    assert list(after.built.rows) == []
    assert [sorted(asked) for asked in storage.asked] == [
        ["team/t-1/", "user/alice/"]
    ] * 2


async def test_listings_at_hand_spare_storage_the_expiry_read() -> None:
    """Every listing cached: the moments come from them, storage is not asked."""
    clock, storage = SetClock(), ExpiryReadingStorage()
    context = with_services(
        context_at(clock, storage), index_cache=MemoryIndexCache(ttl=600)
    )
    await write_file(write(ttl_seconds=60), context)
    first = await get_memory_index_if_changed(NOTHING, INDEX, context)
    storage.asked.clear()

    clock.now = START + timedelta(seconds=61)
    after = await get_memory_index_if_changed({first.tag}, INDEX, context)

    assert storage.asked == []
    assert after.tag != first.tag and after.built is not None
    assert list(after.built.rows) == []


async def test_only_the_owners_view_with_expired_files_is_tagged_so() -> None:
    """The default view's tag has no with-expired part; the owner's has it."""
    context = context_at(SetClock(), MemoryStorage(), ("user=alice:owner",))
    await write_file(write(), context)
    prefixes = granted_prefixes(require_identity(context.identity))
    markers = await cached_listings(context.index_cache, prefixes)
    stamps = [(p, m.stamp) for p, m in zip(prefixes, markers, strict=True)]
    limits = context.limits
    tag = partial(
        index_tag,
        stamps,
        priority=limits.scope_priority,
        max_bytes=limits.index_max_bytes,
    )

    shown = await get_memory_index_if_changed(NOTHING, INDEX, context)
    owners = GetMemoryIndex(include_expired=True)
    with_expired = await get_memory_index_if_changed(NOTHING, owners, context)

    assert shown.tag == tag()
    assert with_expired.tag == tag(with_expired=True)
