"""Choose and open storage and index-cache adapters from their URLs."""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from tenchi.idempotency import IdempotencyStore, MemoryIdempotencyStore
from tenchi.rate_limits import MemoryRateLimitStore, RateLimitStore

from app.features.memory.ports import HistoryRetention, IndexCache, Storage

from .filesystem_storage import FilesystemStorage, filesystem_root
from .gcs_storage import open_gcs_storage
from .memory_index_cache import MemoryIndexCache, NoIndexCache
from .memory_storage import MemoryStorage
from .redis_idempotency_store import open_redis_idempotency_store
from .redis_index_cache import open_redis_index_cache
from .redis_rate_limit_store import open_redis_rate_limit_store
from .sqlite_idempotency_store import open_sqlite_idempotency_store
from .sqlite_rate_limit_store import open_sqlite_rate_limit_store
from .sqlite_storage import open_sqlite_storage


@asynccontextmanager
async def open_storage(
    url: str, *, retention: HistoryRetention | None = None
) -> AsyncGenerator[Storage]:
    """Storage at ``url``, keeping version history within ``retention``."""
    if url == "memory://":
        yield MemoryStorage(retention=retention)
    elif url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        async with open_sqlite_storage(str(path), retention=retention) as storage:
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
async def open_idempotency_store(url: str) -> AsyncGenerator[IdempotencyStore]:
    """Idempotency records: ``memory``, ``sqlite:///path`` or ``redis://…``."""
    if url == "memory":
        yield MemoryIdempotencyStore()
    elif url.startswith("sqlite:///"):
        async with open_sqlite_idempotency_store(url[len("sqlite:///") :]) as store:
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
