"""The IndexCache port on every adapter: in-memory, and Redis shared by replicas.

Each case gets two handles on one cache: for Redis two clients (two replicas),
for the in-memory cache the same object (one process).
"""

import asyncio
import uuid
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import FileMetadata, IndexCache, ListedObject
from app.features.search.domain.corpus import Corpus, SearchDocument
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.infra.port_wiring import open_index_cache, open_storage
from app.shared.errors import backend_unavailable
from tests.support.loopback import LOOPBACK
from tests.support.redis_server import RedisServer
from tests.support.tcp_proxy import tcp_proxy

PREFIX = "user/alice/"
META = FileMetadata(
    "Über ☕",
    ("绿茶", "green", "green"),
    ("http", "mcp"),
    datetime(2026, 1, 2, tzinfo=UTC),
)
LISTING = (
    ListedObject("user/alice/notes/tea.md", META, "17", "2026-01-02T00:00:00Z"),
    ListedObject(
        "user/alice/system/茶.md", META, "1796032317779507", "2026-01-02T00:00:00Z"
    ),
)
LATER = (ListedObject("user/alice/notes/new.md", META, "18", "2026-01-02T00:00:00Z"),)
DOCUMENTS = [SearchDocument("user/alice/notes/tea.md", "17", META, "- Likes tea.")]

Pair = tuple[IndexCache, IndexCache]


def redis_url(server: RedisServer) -> str:
    """The session's Redis with a key prefix of this test's own."""
    return f"{server.url}?key_prefix=t-{uuid.uuid4().hex}:"


@pytest.fixture(params=["memory", "redis"])
async def caches(request: pytest.FixtureRequest) -> AsyncGenerator[Pair]:
    if request.param == "memory":
        cache = MemoryIndexCache(ttl=30)
        yield cache, cache
        return
    url = redis_url(request.getfixturevalue("redis_server"))
    async with (
        open_index_cache(url, ttl=30) as first,
        open_index_cache(url, ttl=30) as second,
    ):
        yield first, second


@pytest.fixture(params=["sqlite", "file"])
async def processes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncGenerator[Pair]:
    """Two processes' in-memory caches over one backend's change markers."""
    if request.param == "sqlite":
        url, storage_url = "memory", f"sqlite:///{tmp_path / 'wenchang.db'}"
    else:
        url, storage_url = "memory", f"file://{tmp_path / 'files'}"
    async with AsyncExitStack() as stack:
        pair = [
            await stack.enter_async_context(_cache(url, storage_url)) for _ in range(2)
        ]
        yield pair[0], pair[1]


@asynccontextmanager
async def _cache(url: str, storage_url: str) -> AsyncGenerator[IndexCache]:
    storage = MemoryStorage()
    async with AsyncExitStack() as stack:
        if storage_url:
            storage = await stack.enter_async_context(open_storage(storage_url))
        cache = await stack.enter_async_context(
            open_index_cache(url, ttl=30, storage_url=storage_url, storage=storage)
        )
        yield cache


async def test_a_fresh_prefix_has_no_listing(caches: Pair) -> None:
    """Nothing stored yet: the listing is None, with a stamp to store under."""
    cached = await caches[0].get(PREFIX)

    assert cached.listing is None and cached.stamp


async def test_a_stored_listing_is_served_to_every_replica(caches: Pair) -> None:
    """A listing one replica stores, every replica reads back exactly."""
    first, second = caches
    stamp = (await first.get(PREFIX)).stamp

    await first.set(PREFIX, LISTING, stamp=stamp)

    assert tuple((await second.get(PREFIX)).listing or ()) == LISTING
    assert tuple((await first.get(PREFIX)).listing or ()) == LISTING


async def test_an_empty_listing_is_cached_as_empty(caches: Pair) -> None:
    """An entity without files caches as an empty listing, not as a miss."""
    stamp = (await caches[0].get(PREFIX)).stamp

    await caches[0].set(PREFIX, (), stamp=stamp)

    assert (await caches[1].get(PREFIX)).listing == ()


async def test_an_invalidation_by_any_replica_drops_the_listing_everywhere(
    caches: Pair,
) -> None:
    """After one replica's write invalidates, no replica serves the old listing."""
    first, second = caches
    await first.set(PREFIX, LISTING, stamp=(await first.get(PREFIX)).stamp)

    await second.invalidate(PREFIX)

    assert (await first.get(PREFIX)).listing is None
    assert (await second.get(PREFIX)).listing is None


async def test_a_listing_read_before_an_invalidation_is_never_stored(
    caches: Pair,
) -> None:
    """Read (stamp), another replica writes and invalidates, store: it is refused."""
    reader, writer = caches
    seen = await reader.get(PREFIX)

    await writer.invalidate(PREFIX)
    await reader.set(PREFIX, LISTING, stamp=seen.stamp)

    assert (await reader.get(PREFIX)).listing is None
    assert (await writer.get(PREFIX)).listing is None


async def test_a_late_stale_store_does_not_replace_a_fresh_listing(
    caches: Pair,
) -> None:
    """A slow reader from before an invalidation loses to a reader from after it."""
    slow, fast = caches
    stale = await slow.get(PREFIX)
    await fast.invalidate(PREFIX)
    fresh = await fast.get(PREFIX)

    await fast.set(PREFIX, LATER, stamp=fresh.stamp)
    await slow.set(PREFIX, LISTING, stamp=stale.stamp)

    assert tuple((await slow.get(PREFIX)).listing or ()) == LATER


async def test_every_invalidation_issues_a_new_stamp(caches: Pair) -> None:
    """Stamps never repeat across invalidations, so an old one never matches."""
    stamps = set[str]()
    for _ in range(5):
        stamps.add((await caches[0].get(PREFIX)).stamp)
        await caches[1].invalidate(PREFIX)

    assert len(stamps) == 5


async def test_a_corpus_is_served_to_every_replica_until_an_invalidation(
    caches: Pair,
) -> None:
    """Corpora share the listing's stamps: one invalidation drops both."""
    first, second = caches
    seen = await first.get_corpus(PREFIX)
    assert seen.corpus is None
    await first.set_corpus(PREFIX, Corpus(DOCUMENTS), stamp=seen.stamp)
    for cache in (first, second, first):
        cached = await cache.get_corpus(PREFIX)
        assert cached.corpus is not None and cached.corpus.documents == DOCUMENTS
        assert cached.stamp == seen.stamp

    await second.invalidate(PREFIX)

    assert (await first.get_corpus(PREFIX)).corpus is None
    assert (await second.get_corpus(PREFIX)).corpus is None


async def test_a_corpus_read_before_an_invalidation_is_never_stored(
    caches: Pair,
) -> None:
    """A corpus built under a stamp an invalidation replaced is refused."""
    reader, writer = caches
    seen = await reader.get_corpus(PREFIX)

    await writer.invalidate(PREFIX)
    await reader.set_corpus(PREFIX, Corpus(DOCUMENTS), stamp=seen.stamp)

    assert (await reader.get_corpus(PREFIX)).corpus is None
    assert (await writer.get_corpus(PREFIX)).corpus is None


async def test_prefixes_are_independent(caches: Pair) -> None:
    """Invalidating one entity leaves another entity's listing cached."""
    other = "user/bob/"
    await caches[0].set(other, LATER, stamp=(await caches[0].get(other)).stamp)

    await caches[1].invalidate(PREFIX)

    assert tuple((await caches[0].get(other)).listing or ()) == LATER


async def test_redis_key_prefixes_keep_deployments_apart(
    redis_server: RedisServer,
) -> None:
    """Two deployments on one Redis, each with its own key_prefix, never mix."""
    async with (
        open_index_cache(redis_url(redis_server), ttl=30) as mine,
        open_index_cache(redis_url(redis_server), ttl=30) as theirs,
    ):
        await mine.set(PREFIX, LISTING, stamp=(await mine.get(PREFIX)).stamp)

        assert (await theirs.get(PREFIX)).listing is None


async def test_redis_listings_expire_after_the_ttl(redis_server: RedisServer) -> None:
    """A stored listing is gone once the TTL has passed (Redis expires it)."""
    async with open_index_cache(redis_url(redis_server), ttl=0.05) as cache:
        await cache.set(PREFIX, LISTING, stamp=(await cache.get(PREFIX)).stamp)
        for _ in range(200):
            if (await cache.get(PREFIX)).listing is None:
                break
            await asyncio.sleep(0.05)

        assert (await cache.get(PREFIX)).listing is None


async def test_redis_outage_is_backend_unavailable_and_service_resumes(
    redis_server: RedisServer,
) -> None:
    """With Redis down reads and stores raise BackendUnavailable, an invalidation
    moves the backend's marker instead (a landed write keeps its answer), and
    every stamp handed out before it is refused after; then service resumes."""
    async with open_index_cache(redis_url(redis_server), ttl=30) as cache:
        stamp = (await cache.get(PREFIX)).stamp
        with redis_server.down():
            for call in (cache.get(PREFIX), cache.set(PREFIX, LISTING, stamp=stamp)):
                with pytest.raises(AppError) as raised:
                    await call
                assert raised.value.definition is backend_unavailable
                assert raised.value.details["reason"] == "unavailable"
            await cache.invalidate(PREFIX)

        fresh = await cache.get(PREFIX)
        assert fresh.stamp != stamp
        await cache.set(PREFIX, LATER, stamp=fresh.stamp)
        assert tuple((await cache.get(PREFIX)).listing or ()) == LATER


@pytest.mark.parametrize("backend", ["sqlite", "file"])
async def test_an_invalidation_that_cannot_reach_redis_still_drops_every_listing(
    redis_server: RedisServer, tmp_path: Path, backend: str
) -> None:
    """One replica cut off from Redis invalidates; another, reaching Redis, holds a
    listing there: it is refused, and the stamp (the index's ETag) moves."""
    key_prefix = f"?key_prefix=t-{uuid.uuid4().hex}:"
    storage_url = (
        f"sqlite:///{tmp_path / 'wenchang.db'}"
        if backend == "sqlite"
        else f"file://{tmp_path / 'files'}"
    )
    async with tcp_proxy(redis_server.port) as proxy, AsyncExitStack() as stack:
        theirs = await stack.enter_async_context(
            _cache(redis_server.url + key_prefix, storage_url)
        )
        mine = await stack.enter_async_context(
            _cache(f"redis://{LOOPBACK}:{proxy.port}/0{key_prefix}", storage_url)
        )
        seen = await theirs.get(PREFIX)
        await theirs.set(PREFIX, LISTING, stamp=seen.stamp)
        assert (await mine.get(PREFIX)).listing == LISTING
        with proxy.cut():
            await mine.invalidate(PREFIX)
        after = await theirs.get(PREFIX)
        assert proxy.dropped > 0
        assert after.listing is None and after.stamp != seen.stamp
        await theirs.set(PREFIX, LATER, stamp=seen.stamp)  # read before: refused
        assert (await mine.get(PREFIX)).listing is None
        seen = await theirs.get_corpus(PREFIX)
        await theirs.set_corpus(PREFIX, Corpus(DOCUMENTS), stamp=seen.stamp)
        assert (await theirs.get_corpus(PREFIX)).corpus is not None
        with proxy.cut():
            await mine.invalidate(PREFIX)
        assert (await theirs.get_corpus(PREFIX)).corpus is None


async def test_a_write_in_one_process_drops_every_process_listing(
    processes: Pair,
) -> None:
    """A cached listing is served only while the backend's marker is unchanged."""
    mine, theirs = processes
    await theirs.set(PREFIX, LISTING, stamp=(await theirs.get(PREFIX)).stamp)
    assert tuple((await theirs.get(PREFIX)).listing or ()) == LISTING

    await mine.invalidate(PREFIX)

    assert (await theirs.get(PREFIX)).listing is None


async def test_a_listing_read_before_another_process_wrote_is_refused(
    processes: Pair,
) -> None:
    reader, writer = processes
    seen = await reader.get(PREFIX)
    await writer.invalidate(PREFIX)
    await reader.set(PREFIX, LISTING, stamp=seen.stamp)

    assert (await reader.get(PREFIX)).listing is None


async def test_the_marker_is_the_same_in_every_process_and_moves_on_change(
    processes: Pair,
) -> None:
    """The stamp is what a conditional index read can use as its ETag."""
    first, second = processes
    before = (await first.get(PREFIX)).stamp
    assert (await second.get(PREFIX)).stamp == before
    await second.invalidate(PREFIX)
    after = (await first.get(PREFIX)).stamp
    assert after != before and (await second.get(PREFIX)).stamp == after
    assert (await first.get("user/bob/")).stamp == (await second.get("user/bob/")).stamp
