"""Index caches for one process, checked against the backend's change markers.

A listing is kept with the entity's marker read before it was listed, and
served only while the backend still holds that marker: a write or purge made
by any process replaces the marker, so no process serves a listing it missed.
"""

import time
from collections.abc import Callable, Sequence

from app.features.memory.ports import CachedListing, ListedObject

from .change_markers import ChangeMarkers, ProcessChangeMarkers


class MemoryIndexCache:
    def __init__(
        self,
        *,
        ttl: float,
        markers: ChangeMarkers | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._markers = markers or ProcessChangeMarkers()
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[str, tuple[float, str, Sequence[ListedObject]]] = {}

    async def get(self, prefix: str) -> CachedListing:
        stamp = await self._markers.read(prefix)
        entry = self._entries.get(prefix)
        if entry is None or entry[1] != stamp or entry[0] <= self._clock():
            return CachedListing(listing=None, stamp=stamp)
        return CachedListing(listing=entry[2], stamp=stamp)

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        # A listing read under an older marker is refused, so it can neither
        # be served nor replace a fresher one.
        if await self._markers.read(prefix) == stamp:
            self._entries[prefix] = (self._clock() + self._ttl, stamp, tuple(listing))

    async def invalidate(self, prefix: str) -> None:
        # Nothing of the prefix is kept, so a purged entity leaves no trace here.
        self._entries.pop(prefix, None)
        await self._markers.bump(prefix)


class NoIndexCache:
    """Keeps nothing; still moves the marker, which conditional reads compare."""

    def __init__(self, markers: ChangeMarkers | None = None) -> None:
        self._markers = markers or ProcessChangeMarkers()

    async def get(self, prefix: str) -> CachedListing:
        return CachedListing(listing=None, stamp=await self._markers.read(prefix))

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        return None

    async def invalidate(self, prefix: str) -> None:
        await self._markers.bump(prefix)
