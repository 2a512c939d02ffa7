"""Choose and open storage and index-cache adapters from their URLs."""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from app.features.memory.ports import IndexCache, Storage

from .memory_index_cache import MemoryIndexCache, NoIndexCache
from .memory_storage import MemoryStorage
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
    else:
        raise ValueError(f"unsupported storage URL {url!r}")


@asynccontextmanager
async def open_index_cache(url: str, *, ttl: float) -> AsyncGenerator[IndexCache]:
    if url == "none":
        yield NoIndexCache()
    elif url == "memory":
        yield MemoryIndexCache(ttl=ttl)
    else:
        raise ValueError(f"unsupported index cache {url!r}")
