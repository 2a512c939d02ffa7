"""Files the index tests store for three granted scopes, and what they read back."""

from datetime import timedelta

from app.features.memory.domain import MemoryLimits, file_key
from app.features.memory.ports import FileMetadata, Storage, Write
from app.features.memory.schemas import (
    MemoryIndex,
)
from app.server.context import AppContext

from .conftest import START, make_context

THREE_SCOPES = ("user=alice:owner", "team=t-1:member", "org=o-1:member")


ENTITIES = {"user": "alice", "team": "t-1", "org": "o-1"}


async def put(
    storage: Storage,
    path: str,
    *,
    seconds: float = 0,
    description: str = "",
) -> None:
    """Store ``scope/area/name`` for the caller's entity, updated at START+seconds."""
    scope, area, name = path.split("/")
    meta = FileMetadata(description, (), ("http",), START + timedelta(seconds=seconds))
    key = file_key(scope, ENTITIES[scope], area, name)
    await storage.put(Write(key, b"- [stated] x\n", meta))


def paths(index: MemoryIndex) -> list[str]:
    return [f"{entry.scope}/{entry.area}/{entry.name}" for entry in index.entries]


def capped(index: MemoryIndex) -> list[tuple[str, str, int]]:
    return [(row.scope, row.area, row.omitted) for row in index.capped]


def budget(limit: int) -> AppContext:
    return make_context(grants=THREE_SCOPES, limits=MemoryLimits(index_max_bytes=limit))
