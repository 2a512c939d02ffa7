"""Opening ports from their URLs (``app/infra/port_wiring.py``).

A SQLite file goes where its URL says, directories made as needed; a Redis
URL opens the Redis request-guard stores on that server; storage without a
search index of its own is searched through the corpora the index cache keeps.
"""

import asyncio
import io
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.idempotency import IdempotencyReservation
from tenchi.rate_limits import RateLimitPermit

from app.features.audit.ports import AuditSelection, PendingEvent, Subject
from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.infra.port_wiring import (
    IDEMPOTENCY_STORES,
    RATE_LIMIT_STORES,
    open_audit_log,
    open_change_markers,
    open_request_store,
    open_storage,
    search_index_of,
)
from app.infra.redis.connection import SOCKET_TIMEOUT_SECONDS, open_redis_client
from app.infra.redis.index_cache import RETRIES, open_redis_index_cache
from tests.support.audited_app import staged_write
from tests.support.gcs_emulator import GcsEmulator
from tests.support.redis_server import RedisServer
from tests.support.sqlite_file import sql
from tests.support.storage_adapters import storage_url

META = FileMetadata("Tea", (), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
TEA = "user/ann/notes/tea.md"


async def test_a_sqlite_file_in_directories_not_made_yet_is_created(
    tmp_path: Path,
) -> None:
    database = tmp_path / "a" / "b" / "wenchang.db"
    async with open_storage(f"sqlite:///{database}") as storage:
        await storage.put(Write(TEA, b"x", META))
    assert database.is_file()


async def reserve(records: object, scope: str) -> object:
    return await records.reserve(  # type: ignore[attr-defined]
        namespace="http",
        scope=scope,
        key="k1",
        fingerprint="f",
        completed_ttl=60.0,
        reservation_ttl=30.0,
    )


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_each_request_store_url_opens_its_store(
    tmp_path: Path, kind: str
) -> None:
    """A SQLite file (in directories made for it) is shared by its openers; each
    memory store is its process's own."""
    url = {"memory": "memory", "sqlite": f"sqlite:///{tmp_path / 'a' / 'g.db'}"}
    scope = uuid.uuid4().hex
    for adapters in (IDEMPOTENCY_STORES, RATE_LIMIT_STORES):
        async with open_request_store(url[kind], adapters) as store:
            assert store is not None
    async with (
        open_request_store(url[kind], IDEMPOTENCY_STORES) as first,
        open_request_store(url[kind], IDEMPOTENCY_STORES) as second,
    ):
        assert isinstance(await reserve(first, scope), IdempotencyReservation)
        shared = not isinstance(await reserve(second, scope), IdempotencyReservation)
    assert shared is (kind == "sqlite")
    assert (tmp_path / "a" / "g.db").is_file() is (kind == "sqlite")


async def test_a_file_root_in_directories_not_made_yet_is_created(
    tmp_path: Path,
) -> None:
    root = tmp_path / "a" / "b"
    async with open_storage(f"file://{root}") as storage:
        await storage.put(Write(TEA, b"x", META))
    assert (root / ".lock").is_file()


async def test_a_gcs_url_opens_storage_in_its_bucket(
    tmp_path: Path, gcs_emulator: GcsEmulator
) -> None:
    """Another opener of the URL (another process) reads what the first wrote."""
    url = storage_url("gcs", tmp_path)
    async with open_storage(url) as first:
        await first.put(Write(TEA, b"x", META))
    async with open_storage(url) as second:
        stored = await second.get(TEA)
    assert stored is not None and stored.data == b"x"


@pytest.mark.parametrize("kind", ["memory", "sqlite", "file", "gcs"])
async def test_storage_keeps_the_history_its_retention_allows(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
    url = storage_url(kind, tmp_path)
    async with open_storage(url, retention=HistoryRetention(max_versions=1)) as storage:
        written = Change("write_file", "http", META.last_updated)
        version = await storage.put(Write(TEA, b"1", META, written))
        for body in (b"2", b"3"):
            version = await storage.put_if_version(
                Write(TEA, body, META, written), version
            )
        history = await storage.list_versions(TEA, after=None, limit=10)

    assert len(history) == 1


async def test_a_redis_url_opens_the_request_guard_stores_on_that_server(
    redis_server: RedisServer,
) -> None:
    scope = uuid.uuid4().hex
    async with open_request_store(redis_server.url, IDEMPOTENCY_STORES) as other:
        assert isinstance(await reserve(other, scope), IdempotencyReservation)
    async with open_request_store(redis_server.url, IDEMPOTENCY_STORES) as records:
        decision = await records.reserve(
            namespace="http",
            scope=scope,
            key="k1",
            fingerprint="f",
            completed_ttl=60.0,
            reservation_ttl=30.0,
        )
        assert not isinstance(decision, IdempotencyReservation)  # the other's
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


async def test_a_sqlite_audit_log_of_the_storage_s_file_commits_with_its_writes(
    tmp_path: Path,
) -> None:
    """The log opened with the storage of its own file takes each write's event."""
    url = f"sqlite:///{tmp_path / 'w.db'}"
    event = staged_write("tea")
    change = Change("write_file", "http", event.at, event=PendingEvent(lambda: event))
    async with (
        open_storage(url) as storage,
        open_audit_log(url, max_days=30, stream=io.StringIO, storage=storage) as log,
    ):
        await storage.put_if_version(
            Write("user/alice/notes/tea.md", b"x", META, change=change), None
        )
        async with asyncio.timeout(30):  # told by the write, the log moves it
            while sql(tmp_path / "w.db", "SELECT count(*) FROM audit_staged") != [(0,)]:
                await asyncio.sleep(0.01)
        everyone = AuditSelection(subjects=(Subject("user", "alice"),))
        page = await log.query(everyone, before=None, limit=10)

    assert [found.id for found in page.events] == [event.id]


@pytest.mark.parametrize("url", ["file:///{root}", "gcs://bucket"])
async def test_storage_without_markers_of_its_own_keeps_them_in_the_process(
    url: str, tmp_path: Path
) -> None:
    """With no storage at hand (a task, the CLI), markers live in the process."""
    async with open_change_markers(url.format(root=tmp_path), None) as markers:
        before = await markers.read("user/alice/")
        await markers.bump("user/alice/")
        assert await markers.read("user/alice/") != before


async def test_a_redis_client_times_out_in_seconds_and_re_sends_as_told(
    redis_server: RedisServer,
) -> None:
    """No retry of our own unless asked (redis-py's default stands); asked, that
    many re-sends on a backoff from 50 ms to 0.5 s."""
    async with open_redis_client(redis_server.url) as plain:
        options = plain.connection_pool.connection_kwargs
        assert "retry" not in options
        assert options["socket_timeout"] == SOCKET_TIMEOUT_SECONDS
        assert options["socket_connect_timeout"] == SOCKET_TIMEOUT_SECONDS
    async with open_redis_index_cache(redis_server.url, ttl=1) as cache:
        client = cache._client  # pyright: ignore[reportPrivateUsage]
        retry = client.connection_pool.connection_kwargs["retry"]
        backoff = retry._backoff  # pyright: ignore[reportPrivateUsage]
        assert retry.get_retries() == RETRIES
        assert [backoff.compute(n) for n in range(6)] == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
