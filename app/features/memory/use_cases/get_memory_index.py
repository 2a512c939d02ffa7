import asyncio
from collections.abc import Iterable, Sequence
from itertools import chain

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import BuiltIndex, build_index
from ..domain.expiry import Expiry, unexpired
from ..policy import granted_prefixes
from ..policy.expiry import hidden_after
from ..ports import CachedListing, ListedObject
from ..ports.storage_reads import list_all
from ..schemas import GetMemoryIndex, MemoryIndex


async def get_memory_index(request: GetMemoryIndex, context: AppContext) -> MemoryIndex:
    """Metadata of every file the caller's grants reach, ordered and budgeted;
    expired files only when an owner of every granted scope asks for them."""
    return (await built_memory_index(request, context)).index


async def built_memory_index(
    request: GetMemoryIndex, context: AppContext
) -> BuiltIndex:
    """``get_memory_index`` as plain rows and JSON text, no model built."""
    identity = require_identity(context.identity)
    hide = hidden_after(identity, None, request.include_expired, context.clock)
    prefixes = granted_prefixes(identity)
    cached = await cached_listings(context, prefixes)
    live, _ = await live_files(context, zip(prefixes, cached, strict=True), hide)
    return index_of(context, live)


async def cached_listings(
    context: AppContext, prefixes: Sequence[str]
) -> list[CachedListing]:
    """Each prefix's marker, and its listing while the cache holds it.

    Each lookup starts at once: one answered without waiting (a marker read
    on the loop's thread, a listing held in memory) finishes there, with no
    trip through the event loop; those that wait (Redis, GCS) run together.
    """
    loop = asyncio.get_running_loop()
    lookups = [
        asyncio.Task(context.index_cache.get(prefix), loop=loop, eager_start=True)
        for prefix in prefixes
    ]
    if not all(lookup.done() for lookup in lookups):
        return await asyncio.gather(*lookups)
    try:
        return [lookup.result() for lookup in lookups]
    except BaseException:  # re-raised once the other lookups are settled
        for lookup in lookups:  # every failure retrieved, as gather does
            if not lookup.cancelled():
                lookup.exception()
        raise


async def live_files(
    context: AppContext,
    entities: Iterable[tuple[str, CachedListing]],
    hide: Expiry | None,
) -> tuple[list[ListedObject], int]:
    """The files of ``entities`` ``hide`` leaves shown (each listed from
    storage unless cached), and how many it hid for having expired."""
    listings = await asyncio.gather(
        *(_entity_listing(context, prefix, cached) for prefix, cached in entities)
    )
    files = chain.from_iterable(listings)
    return (list(files), 0) if hide is None else unexpired(files, hide)


def index_of(context: AppContext, live: Iterable[ListedObject]) -> BuiltIndex:
    limits = context.limits
    return build_index(
        live, priority=limits.scope_priority, max_bytes=limits.index_max_bytes
    )


async def _entity_listing(
    context: AppContext, prefix: str, cached: CachedListing
) -> Sequence[ListedObject]:
    if cached.listing is not None:
        return cached.listing
    listing = await list_all(context.storage, prefix)
    await context.index_cache.set(prefix, listing, stamp=cached.stamp)
    return listing
