"""Opening ports from their URLs (``app/infra/port_wiring.py``).

A SQLite file goes where its URL says, directories made as needed; a Redis
URL opens the Redis request-guard stores on that server; storage without a
search index of its own is searched through the corpora the index cache keeps.
"""

import uuid
from datetime import UTC, datetime
from pathlib import Path

from tenchi.idempotency import IdempotencyReservation
from tenchi.rate_limits import RateLimitPermit

from app.features.memory.ports import FileMetadata, Write
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.infra.port_wiring import (
    IDEMPOTENCY_STORES,
    RATE_LIMIT_STORES,
    open_request_store,
    open_storage,
    search_index_of,
)
from tests.support.redis_server import RedisServer

META = FileMetadata("Tea", (), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
TEA = "user/ann/notes/tea.md"


async def test_a_sqlite_file_in_directories_not_made_yet_is_created(
    tmp_path: Path,
) -> None:
    database = tmp_path / "a" / "b" / "wenchang.db"
    async with open_storage(f"sqlite:///{database}") as storage:
        await storage.put(Write(TEA, b"x", META))
    assert database.is_file()


async def test_a_redis_url_opens_the_request_guard_stores_on_that_server(
    redis_server: RedisServer,
) -> None:
    scope = uuid.uuid4().hex
    async with open_request_store(redis_server.url, IDEMPOTENCY_STORES) as records:
        decision = await records.reserve(
            namespace="http",
            scope=scope,
            key="k1",
            fingerprint="f",
            completed_ttl=60.0,
            reservation_ttl=30.0,
        )
        assert isinstance(decision, IdempotencyReservation)
    async with open_request_store(redis_server.url, RATE_LIMIT_STORES) as windows:
        permit = await windows.consume(
            namespace="http", scope=scope, limit=5, window_seconds=60.0, cost=1
        )
        assert isinstance(permit, RateLimitPermit) and permit.remaining == 4


async def test_storage_without_an_index_is_searched_through_its_corpora() -> None:
    storage = MemoryStorage()
    await storage.put(Write(TEA, b"# Tea\n\nsencha is green", META))
    cache = MemoryIndexCache(ttl=30)
    index = search_index_of(storage, cache)
    assert isinstance(index, CorpusSearchIndex)

    corpus = await index.corpus("user/ann/")

    assert [document.key for document in corpus.documents] == [TEA]
    assert (await cache.get_corpus("user/ann/")).corpus is corpus
