"""The index's reads through its two ports: markers, listings and expiry moments.

Each entity's listing comes from the index cache while it holds one under the
entity's current marker, else from storage (then offered to the cache under
the marker read before it, so a write landing meanwhile is never masked).
"""

import asyncio
from collections.abc import Coroutine, Iterable, Sequence
from datetime import datetime
from itertools import chain

from ..domain.expiry import Expiry, unexpired
from . import CachedListing, IndexCache, ListedObject, Storage
from .expiries import ListsExpiries
from .storage_reads import list_all


async def cached_listings(
    cache: IndexCache, prefixes: Sequence[str]
) -> list[CachedListing]:
    """Each prefix's marker, and its listing while the cache holds it."""
    return await at_once([cache.get(prefix) for prefix in prefixes])


async def at_once[T](calls: Sequence[Coroutine[object, None, T]]) -> list[T]:
    """The results of ``calls``, run together.

    Each call starts at once: one answered without waiting (a marker read
    on the loop's thread, a listing held in memory) finishes there, with no
    trip through the event loop; those that wait (Redis, GCS) run together.
    """
    loop = asyncio.get_running_loop()
    started = [asyncio.Task(call, loop=loop, eager_start=True) for call in calls]
    if not all(task.done() for task in started):
        return await asyncio.gather(*started)
    try:
        return [task.result() for task in started]
    except BaseException:  # re-raised once the other calls are settled
        for task in started:  # every failure retrieved, as gather does
            if not task.cancelled():
                task.exception()
        raise


async def expiry_moments(
    storage: Storage, cache: IndexCache, entities: Sequence[tuple[str, CachedListing]]
) -> tuple[list[tuple[str, CachedListing]], list[datetime]]:
    """When the entities' files expire, and the entities with what that listed.

    Storage that reads expiries apart (``ListsExpiries``) is asked once for
    every entity whose listing is not at hand; other storage lists each such
    entity, and its listing comes back with it to build the body from.
    """
    if isinstance(storage, ListsExpiries):
        unlisted = [prefix for prefix, cached in entities if cached.listing is None]
        moments = list(await storage.expiry_moments(unlisted)) if unlisted else []
        listed = list(entities)
    else:
        listings = await at_once(
            [entity_listing(storage, cache, *entity) for entity in entities]
        )
        listed = [
            (prefix, CachedListing(listing=listing, stamp=cached.stamp))
            for (prefix, cached), listing in zip(entities, listings, strict=True)
        ]
        moments = []
    for _, cached in listed:
        for item in cached.listing or ():
            if item.metadata.expires_at is not None:
                moments.append(item.metadata.expires_at)
    return listed, moments


async def live_files(
    storage: Storage,
    cache: IndexCache,
    entities: Iterable[tuple[str, CachedListing]],
    hide: Expiry | None,
) -> list[ListedObject]:
    """The files of ``entities`` ``hide`` leaves shown (None: every file)."""
    listings = await asyncio.gather(
        *(entity_listing(storage, cache, prefix, held) for prefix, held in entities)
    )
    files = chain.from_iterable(listings)
    return list(files) if hide is None else unexpired(files, hide)


async def entity_listing(
    storage: Storage, cache: IndexCache, prefix: str, cached: CachedListing
) -> Sequence[ListedObject]:
    """The entity's listing: the cached one, else storage's, offered to the cache."""
    if cached.listing is not None:
        return cached.listing
    listing = await list_all(storage, prefix)
    await cache.set(prefix, listing, stamp=cached.stamp)
    return listing
