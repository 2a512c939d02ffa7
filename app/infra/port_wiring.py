"""Choose and open storage and index-cache adapters from their URLs."""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from app.features.memory.ports import IndexCache, Storage

from .filesystem_storage import FilesystemStorage, filesystem_root
from .gcs_storage import open_gcs_storage
from .memory_index_cache import MemoryIndexCache, NoIndexCache
from .memory_storage import MemoryStorage
from .redis_index_cache import open_redis_index_cache
from .sqlite_storage import open_sqlite_storage


@asynccontextmanager
async def open_storage(url: str) -> AsyncGenerator[Storage]:
    if url == "memory://":
        yield MemoryStorage()
    elif url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        async with open_sqlite_storage(str(path)) as storage:
            yield storage
    elif url.startswith("file://"):
        root = filesystem_root(url)
        root.mkdir(parents=True, exist_ok=True)
        yield FilesystemStorage(root)
    elif url.startswith("gcs://"):
        async with open_gcs_storage(url) as storage:
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
