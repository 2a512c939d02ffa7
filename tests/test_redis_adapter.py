"""The Redis adapter's own rules: clocks, leases, windows, corpora, outages.

The conformance suites (``test_security_stores``, ``test_index_cache``,
``test_request_record_erasure``) hold Redis to what every adapter promises; these
cases pin what only the Redis adapter decides: the figures it hands back, how it
reports a Redis that stops answering, and the decoded corpora a replica keeps.
"""

import logging
import os
import signal
import uuid
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import cast

import pytest
from redis.asyncio import Redis
from tenchi.errors import AppError
from tenchi.idempotency import IdempotencyInProgress, IdempotencyReservation
from tenchi.rate_limits import RateLimitPermit

from app.features.memory.ports import FileMetadata
from app.features.search.domain.corpus import Corpus, SearchDocument
from app.infra.redis.idempotency_store import open_redis_idempotency_store
from app.infra.redis.index_cache import (
    MAX_CORPORA,
    RedisIndexCache,
    open_redis_index_cache,
)
from app.infra.redis.rate_limit_store import open_redis_rate_limit_store
from app.shared.errors import backend_unavailable
from tests.support.loopback import LOOPBACK
from tests.support.redis_server import RedisServer

PREFIX = "user/alice/"
KEYS = "return redis.call('KEYS', ARGV[1])"
META = FileMetadata("Tea", (), ("http",), datetime(2026, 1, 2, tzinfo=UTC))


class Clock:
    """A clock the test moves by hand (seconds, like ``time.time``)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def corpus_of(text: str) -> Corpus:
    return Corpus([SearchDocument(f"{PREFIX}notes/a.md", "1", META, text)])


async def keys_matching(server: RedisServer, pattern: str) -> set[str]:
    client = Redis(host=LOOPBACK, port=server.port, decode_responses=True)
    try:
        found = await client.register_script(KEYS)(args=[pattern])
        return set(cast(list[str], found))
    finally:
        await client.aclose()


@pytest.fixture
def key_prefix() -> str:
    """This test's own keys on the session's Redis."""
    return f"t-{uuid.uuid4().hex}:"


@pytest.fixture
async def cache(
    redis_server: RedisServer, key_prefix: str
) -> AsyncGenerator[RedisIndexCache]:
    url = f"{redis_server.url}?key_prefix={key_prefix}"
    async with open_redis_index_cache(url, ttl=30) as opened:
        yield opened


async def test_an_answer_in_progress_waits_out_the_lease_left(
    redis_server: RedisServer,
) -> None:
    """A second claim of a held key is told to retry after the holder's lease
    left, by the store's clock, rounded up to whole seconds."""
    clock = Clock()
    key = uuid.uuid4().hex
    async with open_redis_idempotency_store(redis_server.url, clock=clock) as store:
        first = await store.reserve(
            namespace="n",
            scope="s",
            key=key,
            fingerprint="f",
            completed_ttl=600,
            reservation_ttl=60,
        )
        clock.now += 54.997  # 5.003 s of the lease are left
        second = await store.reserve(
            namespace="n",
            scope="s",
            key=key,
            fingerprint="f",
            completed_ttl=600,
            reservation_ttl=60,
        )

    assert isinstance(first, IdempotencyReservation)
    assert second == IdempotencyInProgress(retry_after_seconds=6)


async def test_a_lease_shorter_than_a_millisecond_lasts_one(
    redis_server: RedisServer,
) -> None:
    """Leases are kept in whole milliseconds, never zero: a tiny lease holds its
    key for that millisecond and frees it on the next."""
    clock = Clock()
    key = uuid.uuid4().hex
    async with open_redis_idempotency_store(redis_server.url, clock=clock) as store:
        answers: list[object] = []
        for step in (0.0, 0.0, 0.001):
            clock.now += step
            answers.append(
                await store.reserve(
                    namespace="n",
                    scope="s",
                    key=key,
                    fingerprint="f",
                    completed_ttl=600,
                    reservation_ttl=0.0001,
                )
            )

    kinds = [type(answer).__name__ for answer in answers]
    assert kinds == [
        "IdempotencyReservation",
        "IdempotencyInProgress",
        "IdempotencyReservation",
    ]


async def test_a_permit_tells_the_time_left_in_its_window(
    redis_server: RedisServer,
) -> None:
    """A window's reset is counted from its start by the store's clock."""
    clock = Clock()
    scope = uuid.uuid4().hex
    async with open_redis_rate_limit_store(redis_server.url, clock=clock) as store:
        first = await store.consume(
            namespace="n", scope=scope, limit=5, window_seconds=60, cost=1
        )
        clock.now += 12.5
        second = await store.consume(
            namespace="n", scope=scope, limit=5, window_seconds=60, cost=2
        )

    assert first == RateLimitPermit(limit=5, remaining=4, reset_after_seconds=60.0)
    assert second == RateLimitPermit(limit=5, remaining=2, reset_after_seconds=47.5)


async def test_a_window_shorter_than_a_millisecond_lasts_one(
    redis_server: RedisServer,
) -> None:
    """Windows are whole milliseconds, never zero: the limit holds for that
    millisecond and a new window opens on the next."""
    clock = Clock()
    scope = uuid.uuid4().hex
    async with open_redis_rate_limit_store(redis_server.url, clock=clock) as store:
        answers: list[object] = []
        for step in (0.0, 0.0, 0.001):
            clock.now += step
            answers.append(
                await store.consume(
                    namespace="n", scope=scope, limit=1, window_seconds=0.0001, cost=1
                )
            )

    assert answers[0] == RateLimitPermit(1, 0, 0.001)
    assert type(answers[1]).__name__ == "RateLimitExceeded"
    assert answers[2] == RateLimitPermit(1, 0, 0.001)


async def test_a_redis_that_stops_answering_is_a_timeout(
    redis_server: RedisServer,
) -> None:
    """A Redis that accepts but never answers (a stopped process) turns into
    BACKEND_UNAVAILABLE with the reason ``timeout``, within the socket timeout."""
    process = redis_server.process
    assert process is not None
    async with open_redis_rate_limit_store(redis_server.url) as store:
        await store.consume(namespace="n", scope="s", limit=9, window_seconds=1, cost=1)
        os.kill(process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(AppError) as raised:
                await store.consume(
                    namespace="n", scope="s", limit=9, window_seconds=1, cost=1
                )
        finally:
            os.kill(process.pid, signal.SIGCONT)

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "timeout"


async def test_a_replica_decodes_a_corpus_once_per_stamp(
    redis_server: RedisServer, cache: RedisIndexCache, key_prefix: str
) -> None:
    """While the stamp holds, Redis answers "yours is current" and the replica
    serves the corpus it stored or decoded, not a copy decoded again."""
    url = f"{redis_server.url}?key_prefix={key_prefix}"
    stored = corpus_of("- Likes tea.")
    await cache.set_corpus(PREFIX, stored, stamp=(await cache.get_corpus(PREFIX)).stamp)
    async with open_redis_index_cache(url, ttl=30) as other:
        decoded = (await other.get_corpus(PREFIX)).corpus
        again = (await other.get_corpus(PREFIX)).corpus

    assert (await cache.get_corpus(PREFIX)).corpus is stored
    assert decoded is not None and decoded.documents == stored.documents
    assert again is decoded


async def test_a_replica_keeps_the_corpora_it_used_last(
    cache: RedisIndexCache,
) -> None:
    """A replica keeps MAX_CORPORA decoded corpora; a new one drops the one
    stored or decoded longest ago (storing again counts as a use)."""
    prefixes = [f"user/u{i}/" for i in range(MAX_CORPORA + 1)]
    corpora = {prefix: corpus_of(prefix) for prefix in prefixes}
    for prefix in prefixes[:MAX_CORPORA]:
        stamp = (await cache.get_corpus(prefix)).stamp
        await cache.set_corpus(prefix, corpora[prefix], stamp=stamp)
    kept = [
        (await cache.get_corpus(prefix)).corpus is corpora[prefix]
        for prefix in prefixes[:MAX_CORPORA]
    ]
    first, second, last = prefixes[0], prefixes[1], prefixes[-1]
    corpora[first] = corpus_of("stored again")
    await cache.set_corpus(
        first, corpora[first], stamp=(await cache.get_corpus(first)).stamp
    )
    await cache.set_corpus(
        last, corpora[last], stamp=(await cache.get_corpus(last)).stamp
    )

    assert all(kept)
    assert (await cache.get_corpus(first)).corpus is corpora[first]
    dropped = (await cache.get_corpus(second)).corpus
    assert dropped is not corpora[second]
    assert dropped is not None and dropped.documents == corpora[second].documents


async def test_an_invalidation_leaves_no_key_of_the_prefix_in_redis(
    redis_server: RedisServer, cache: RedisIndexCache, key_prefix: str
) -> None:
    """An invalidation (every write, a purge) drops the prefix's stamp, listing
    and corpus alike: nothing of the entity is left in Redis."""
    stamp = (await cache.get(PREFIX)).stamp
    await cache.set(PREFIX, (), stamp=stamp)
    await cache.set_corpus(PREFIX, corpus_of("- Likes tea."), stamp=stamp)
    before = await keys_matching(redis_server, f"{key_prefix}*")
    await cache.invalidate(PREFIX)
    after = await keys_matching(redis_server, f"{key_prefix}*")

    assert len(before) == 3
    assert after == set()


async def test_an_invalidation_without_redis_is_logged(
    redis_server: RedisServer,
    cache: RedisIndexCache,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An operator sees that Redis was unreachable and the marker moved instead."""
    with caplog.at_level(logging.WARNING), redis_server.down():
        await cache.invalidate(PREFIX)

    assert "Redis unreachable: an index invalidated by its change marker" in [
        record.getMessage() for record in caplog.records
    ]


async def test_a_listing_is_kept_for_the_ttl_and_served_with_its_stamp(
    redis_server: RedisServer, key_prefix: str
) -> None:
    """A stored listing expires in Redis after the cache's TTL (no later), and a
    hit hands back the stamp it was stored under."""
    url = f"{redis_server.url}?key_prefix={key_prefix}"
    client = Redis(host=LOOPBACK, port=redis_server.port)
    try:
        async with open_redis_index_cache(url, ttl=1000) as cache:
            stamp = (await cache.get(PREFIX)).stamp
            await cache.set(PREFIX, (), stamp=stamp)
            hit = await cache.get(PREFIX)
            left_ms = await client.pttl(f"{key_prefix}list:{PREFIX}")
    finally:
        await client.aclose()

    assert hit.listing == () and hit.stamp == stamp
    assert 990_000 < left_ms <= 1_000_000


async def _keys_after_a_read(server: RedisServer, query: str, prefix: str) -> set[str]:
    """The keys naming ``prefix`` once a cache opened with ``query`` read it."""
    async with open_redis_index_cache(f"{server.url}{query}", ttl=30) as cache:
        await cache.get(prefix)
        found = await keys_matching(server, f"*{prefix}")
        await cache.invalidate(prefix)
    return found


async def test_keys_carry_the_url_key_prefix_or_wenchang_index(
    redis_server: RedisServer,
) -> None:
    """``?key_prefix=p`` puts every key under ``p``; none given, under
    ``wenchang:index:``; an empty one is honoured (no prefix at all)."""
    entity = f"user/{uuid.uuid4().hex}/"

    given = await _keys_after_a_read(redis_server, "?key_prefix=acme:", entity)
    default = await _keys_after_a_read(redis_server, "", entity)
    empty = await _keys_after_a_read(redis_server, "?key_prefix=", entity)

    assert given == {f"acme:stamp:{entity}"}
    assert default == {f"wenchang:index:stamp:{entity}"}
    assert empty == {f"stamp:{entity}"}


async def test_the_url_options_besides_key_prefix_reach_redis(
    redis_server: RedisServer,
) -> None:
    """Only ``key_prefix`` is the cache's own option; the rest of the URL's query
    is redis-py's, passed on as given."""
    name = f"wenchang-{uuid.uuid4().hex[:8]}"
    url = f"{redis_server.url}?key_prefix=p:&client_name={name}"
    client = Redis(host=LOOPBACK, port=redis_server.port, decode_responses=True)
    try:
        async with open_redis_index_cache(url, ttl=30) as cache:
            await cache.get(PREFIX)
            # redis-py leaves client_list's **kwargs untyped; its answer is typed.
            listed = await client.client_list()  # pyright: ignore[reportUnknownMemberType]
            names = [entry["name"] for entry in listed]
    finally:
        await client.aclose()

    assert name in names


async def test_a_corpus_is_stored_as_utf_8_text(
    redis_server: RedisServer, cache: RedisIndexCache, key_prefix: str
) -> None:
    """Non-ASCII content takes its UTF-8 size in Redis, not six bytes a character
    as JSON escapes."""
    await cache.set_corpus(
        PREFIX, corpus_of("- 喜欢绿茶。"), stamp=(await cache.get_corpus(PREFIX)).stamp
    )
    client = Redis(host=LOOPBACK, port=redis_server.port)
    try:
        stored = await client.get(f"{key_prefix}search:{PREFIX}")
    finally:
        await client.aclose()

    assert isinstance(stored, bytes) and "喜欢绿茶".encode() in stored
