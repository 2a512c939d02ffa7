import asyncio
from collections.abc import Sequence

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import build_index
from ..policy import granted_prefixes
from ..ports import ListedObject
from ..ports.storage_reads import list_all
from ..schemas import MemoryIndex


async def get_memory_index(context: AppContext) -> MemoryIndex:
    """Metadata of every file the caller's grants reach, ordered and budgeted."""
    identity = require_identity(context.identity)
    listings = await asyncio.gather(
        *(_entity_listing(context, prefix) for prefix in granted_prefixes(identity))
    )
    limits = context.limits
    return build_index(
        (item for listing in listings for item in listing),
        priority=limits.scope_priority,
        max_bytes=limits.index_max_bytes,
    )


async def _entity_listing(context: AppContext, prefix: str) -> Sequence[ListedObject]:
    cached = await context.index_cache.get(prefix)
    if cached.listing is not None:
        return cached.listing
    listing = await list_all(context.storage, prefix)
    await context.index_cache.set(prefix, listing, stamp=cached.stamp)
    return listing
