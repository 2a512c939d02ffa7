"""Choose and open storage and index-cache adapters from their URLs."""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

from tenchi.idempotency import IdempotencyStore, MemoryIdempotencyStore
from tenchi.rate_limits import MemoryRateLimitStore, RateLimitStore

from app.features.audit.ports import AuditLog
from app.features.memory.ports import HistoryRetention, IndexCache, Storage

from .file_audit_log import FileAuditLog
from .filesystem_storage import FilesystemStorage, filesystem_root
from .gcs_storage import open_gcs_storage
from .memory_audit_log import MemoryAuditLog
from .memory_index_cache import MemoryIndexCache, NoIndexCache
from .memory_storage import MemoryStorage
from .redis_idempotency_store import open_redis_idempotency_store
from .redis_index_cache import open_redis_index_cache
from .redis_rate_limit_store import open_redis_rate_limit_store
from .sqlite_audit_log import open_sqlite_audit_log
from .sqlite_connection import DEFAULT_SYNCHRONOUS, Synchronous
from .sqlite_idempotency_store import open_sqlite_idempotency_store
from .sqlite_rate_limit_store import open_sqlite_rate_limit_store
from .sqlite_storage import open_sqlite_storage
from .stream_audit_log import NoAuditLog, StreamAuditLog


@asynccontextmanager
async def open_storage(
    url: str,
    *,
    sqlite_synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
    retention: HistoryRetention | None = None,
) -> AsyncGenerator[Storage]:
    """Storage at ``url``, keeping version history within ``retention``."""
    if url == "memory://":
        yield MemoryStorage(retention=retention)
    elif url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        async with open_sqlite_storage(
            str(path), synchronous=sqlite_synchronous, retention=retention
        ) as storage:
            yield storage
    elif url.startswith("file://"):
        root = filesystem_root(url)
        root.mkdir(parents=True, exist_ok=True)
        yield FilesystemStorage(root, retention=retention)
    elif url.startswith("gcs://"):
        async with open_gcs_storage(url, retention=retention) as storage:
            yield storage
    else:
        raise ValueError(f"unsupported storage URL {url!r}")


@asynccontextmanager
async def open_index_cache(url: str, *, ttl: float) -> AsyncGenerator[IndexCache]:
    if url == "none":
        yield NoIndexCache()
    elif url == "memory":
        yield MemoryIndexCache(ttl=ttl)
    elif url.startswith(("redis://", "rediss://")):
        async with open_redis_index_cache(url, ttl=ttl) as cache:
            yield cache
    else:
        raise ValueError(f"unsupported index cache {url!r}")


@asynccontextmanager
async def open_idempotency_store(
    url: str, *, sqlite_synchronous: Synchronous = DEFAULT_SYNCHRONOUS
) -> AsyncGenerator[IdempotencyStore]:
    """Idempotency records: ``memory``, ``sqlite:///path`` or ``redis://…``."""
    if url == "memory":
        yield MemoryIdempotencyStore()
    elif url.startswith("sqlite:///"):
        async with open_sqlite_idempotency_store(
            url[len("sqlite:///") :], synchronous=sqlite_synchronous
        ) as store:
            yield store
    elif url.startswith(("redis://", "rediss://")):
        async with open_redis_idempotency_store(url) as store:
            yield store
    else:
        raise ValueError(f"unsupported request store {url!r}")


@asynccontextmanager
async def open_rate_limit_store(url: str) -> AsyncGenerator[RateLimitStore]:
    """Rate-limit windows: ``memory``, ``sqlite:///path`` or ``redis://…``."""
    if url == "memory":
        yield MemoryRateLimitStore()
    elif url.startswith("sqlite:///"):
        async with open_sqlite_rate_limit_store(url[len("sqlite:///") :]) as store:
            yield store
    elif url.startswith(("redis://", "rediss://")):
        async with open_redis_rate_limit_store(url) as store:
            yield store
    else:
        raise ValueError(f"unsupported request store {url!r}")


@asynccontextmanager
async def open_audit_log(
    url: str,
    *,
    max_days: int,
    stream: TextIO,
    sqlite_synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
) -> AsyncGenerator[AuditLog]:
    """Audit events: ``sqlite:///path``, ``file:///dir``, ``stdout`` (``stream``),
    ``memory`` or ``none``; buffered events are written on exit."""
    if url == "none":
        yield NoAuditLog()
    elif url == "memory":
        yield MemoryAuditLog()
    elif url == "stdout":
        yield StreamAuditLog(stream)
    elif url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        async with open_sqlite_audit_log(
            str(path), max_days=max_days, synchronous=sqlite_synchronous
        ) as log:
            yield log
    elif url.startswith("file://"):
        log = FileAuditLog(filesystem_root(url), max_days=max_days)
        try:
            yield log
        finally:
            await log.close()
    else:
        raise ValueError(f"unsupported audit store {url!r}")
