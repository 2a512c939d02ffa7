"""Open each port's adapter from its backend URL (forms in ``backend_urls``)."""

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TextIO

from tenchi.rate_limits import RateLimitStore

from app.features.audit.ports import AuditLog
from app.features.memory.ports import HistoryRetention, IndexCache, Storage
from app.features.memory.ports.request_records import RequestRecords
from app.features.search.ports import SearchIndex
from app.features.webhooks.ports import WebhookStore
from app.infra.backend_urls import (
    AUDIT_URLS,
    INDEX_CACHE_URLS,
    REQUEST_STORE_URLS,
    STORAGE_URLS,
    Backend,
    backend_of,
    sqlite_path,
)
from app.infra.change_markers import (
    ChangeMarkers,
    ProcessChangeMarkers,
    StorageChangeMarkers,
    open_sqlite_change_markers,
)
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.filesystem.audit_log import FileAuditLog
from app.infra.filesystem.storage import FilesystemStorage, filesystem_root
from app.infra.filesystem.webhook_store import FileWebhookStore
from app.infra.memory.audit_log import MemoryAuditLog
from app.infra.memory.idempotency_store import MemoryIdempotencyStore
from app.infra.memory.index_cache import MemoryIndexCache, NoIndexCache
from app.infra.memory.process_rate_limit_store import ProcessRateLimitStore
from app.infra.memory.storage import MemoryStorage
from app.infra.memory.webhook_store import MemoryWebhookStore
from app.infra.sqlite.audit_log import open_sqlite_audit_log
from app.infra.sqlite.connection import DEFAULT_SYNCHRONOUS, Synchronous
from app.infra.sqlite.idempotency_store import open_sqlite_idempotency_store
from app.infra.sqlite.rate_limit_store import open_sqlite_rate_limit_store
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage
from app.infra.sqlite.webhook_store import SqliteWebhookStore
from app.infra.stream_audit_log import NoAuditLog, StreamAuditLog


def _sqlite_file(url: str) -> str:
    path = sqlite_path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


@asynccontextmanager
async def open_storage(
    url: str,
    *,
    sqlite_synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
    retention: HistoryRetention | None = None,
) -> AsyncGenerator[Storage]:
    """Storage at ``url``, keeping version history within ``retention``."""
    match backend_of(url, STORAGE_URLS):
        case Backend.SQLITE:
            async with open_sqlite_storage(
                _sqlite_file(url), synchronous=sqlite_synchronous, retention=retention
            ) as storage:
                yield storage
        case Backend.FILE:
            root = filesystem_root(url)
            root.mkdir(parents=True, exist_ok=True)
            yield FilesystemStorage(root, retention=retention)
        case Backend.GCS:
            from app.infra.gcs.storage import open_gcs_storage

            async with open_gcs_storage(url, retention=retention) as storage:
                yield storage
        case _:
            yield MemoryStorage(retention=retention)


@asynccontextmanager
async def open_webhook_store(url: str) -> AsyncGenerator[WebhookStore]:
    """Webhook endpoints beside the storage at ``url``, shared as it is."""
    match backend_of(url, STORAGE_URLS):
        case Backend.SQLITE:
            store = SqliteWebhookStore(sqlite_path(url))
            try:
                yield store
            finally:
                store.close()
        case Backend.FILE:
            yield FileWebhookStore(filesystem_root(url))
        case Backend.GCS:
            from app.infra.gcs.webhook_store import open_gcs_webhook_store

            async with open_gcs_webhook_store(url) as gcs_store:
                yield gcs_store
        case _:
            yield MemoryWebhookStore()


@asynccontextmanager
async def open_change_markers(
    storage_url: str, storage: Storage | None
) -> AsyncGenerator[ChangeMarkers]:
    """Where every process on ``storage_url`` finds the entities' change markers."""
    backend = backend_of(storage_url, STORAGE_URLS)
    if backend is Backend.SQLITE:
        async with open_sqlite_change_markers(_sqlite_file(storage_url)) as markers:
            yield markers
    elif storage is None or backend is Backend.MEMORY:
        yield ProcessChangeMarkers()
    else:
        yield StorageChangeMarkers(storage)


@asynccontextmanager
async def open_index_cache(
    url: str,
    *,
    ttl: float,
    storage_url: str = "memory://",
    storage: Storage | None = None,
) -> AsyncGenerator[IndexCache]:
    """The index cache; each checks the change markers of ``storage``'s backend,
    and Redis its own shared stamps too (a write moves the marker only when
    Redis cannot be reached, or on SQLite, where the write's statement does)."""
    backend = backend_of(url, INDEX_CACHE_URLS)
    async with open_change_markers(storage_url, storage) as markers:
        if backend is Backend.REDIS:
            from app.infra.redis.index_cache import open_redis_index_cache

            async with open_redis_index_cache(url, ttl=ttl, markers=markers) as cache:
                yield cache
        elif backend is Backend.MEMORY:
            yield MemoryIndexCache(ttl=ttl, markers=markers)
        else:
            yield NoIndexCache(markers)


# The Redis client (~110 ms) and gcloud-aio (~170 ms) are imported only by a
# deployment that uses them: every CLI start and task run pays what it imports.
def _redis_idempotency_store(url: str) -> AbstractAsyncContextManager[RequestRecords]:
    from app.infra.redis.idempotency_store import open_redis_idempotency_store

    return open_redis_idempotency_store(url)


def _redis_rate_limit_store(url: str) -> AbstractAsyncContextManager[RateLimitStore]:
    from app.infra.redis.rate_limit_store import open_redis_rate_limit_store

    return open_redis_rate_limit_store(url)


@dataclass(frozen=True, slots=True)
class RequestStoreAdapters[T]:
    """The adapters of one request-guard port, by backend."""

    memory: Callable[[], T]
    sqlite: Callable[[str, Synchronous], AbstractAsyncContextManager[T]]
    redis: Callable[[str], AbstractAsyncContextManager[T]]


IDEMPOTENCY_STORES: RequestStoreAdapters[RequestRecords] = RequestStoreAdapters(
    MemoryIdempotencyStore,
    lambda path, synchronous: open_sqlite_idempotency_store(
        path, synchronous=synchronous
    ),
    _redis_idempotency_store,
)
# WENCHANG_SQLITE_SYNCHRONOUS is for what a write's durability rests on;
# rate-limit windows keep the default.
RATE_LIMIT_STORES: RequestStoreAdapters[RateLimitStore] = RequestStoreAdapters(
    ProcessRateLimitStore,
    lambda path, _: open_sqlite_rate_limit_store(path),
    _redis_rate_limit_store,
)


@asynccontextmanager
async def open_request_store[T](
    url: str,
    adapters: RequestStoreAdapters[T],
    *,
    sqlite_synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
) -> AsyncGenerator[T]:
    """A request-guard store (``IDEMPOTENCY_STORES``, ``RATE_LIMIT_STORES``)."""
    match backend_of(url, REQUEST_STORE_URLS):
        case Backend.SQLITE:
            async with adapters.sqlite(_sqlite_file(url), sqlite_synchronous) as store:
                yield store
        case Backend.REDIS:
            async with adapters.redis(url) as store:
                yield store
        case _:
            yield adapters.memory()


@asynccontextmanager
async def open_audit_log(
    url: str,
    *,
    max_days: int,
    stream: Callable[[], TextIO],
    sqlite_synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
    storage: Storage | None = None,
) -> AsyncGenerator[AuditLog]:
    """Audit events on the backend of ``url`` (``stdout`` writes to the stream
    ``stream()`` returns at each write);
    buffered events are written on exit. When ``storage`` is the SQLite
    database of ``url``, each mutation's event commits with its write."""
    match backend_of(url, AUDIT_URLS):
        case Backend.SQLITE:
            path = _sqlite_file(url)
            async with open_sqlite_audit_log(
                path, max_days=max_days, synchronous=sqlite_synchronous
            ) as log:
                if isinstance(storage, SqliteStorage):
                    await storage.share_audit_log(path, log.staged)
                yield log
        case Backend.FILE:
            log = FileAuditLog(filesystem_root(url), max_days=max_days)
            try:
                yield log
            finally:
                await log.close()
        case Backend.STDOUT:
            yield StreamAuditLog(stream)
        case Backend.MEMORY:
            yield MemoryAuditLog()
        case _:
            yield NoAuditLog()


def search_index_of(storage: Storage, cache: IndexCache) -> SearchIndex:
    """The backend's own search index (SQLite keeps one), else corpora of its
    files kept in the index cache."""
    if isinstance(storage, SqliteStorage):
        return storage.search_index
    return CorpusSearchIndex(storage, cache)
