"""Index caches for one process: a TTL cache, and one that never keeps anything."""

import itertools
import time
from collections.abc import Callable, Sequence

from app.features.memory.ports import CachedListing, ListedObject


class MemoryIndexCache:
    def __init__(
        self, *, ttl: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[str, tuple[float, str, Sequence[ListedObject]]] = {}
        self._stamps: dict[str, str] = {}
        self._counter = itertools.count(1)

    def _stamp(self, prefix: str) -> str:
        return self._stamps.setdefault(prefix, str(next(self._counter)))

    async def get(self, prefix: str) -> CachedListing:
        stamp = self._stamp(prefix)
        entry = self._entries.get(prefix)
        if entry is None or entry[1] != stamp or entry[0] <= self._clock():
            return CachedListing(listing=None, stamp=stamp)
        return CachedListing(listing=entry[2], stamp=stamp)

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        if self._stamps.get(prefix) == stamp:
            self._entries[prefix] = (self._clock() + self._ttl, stamp, tuple(listing))

    async def invalidate(self, prefix: str) -> None:
        # Forgetting the stamp also rejects a racing set: stamps never repeat.
        # Nothing of the prefix is kept, so a purged entity leaves no trace here.
        self._stamps.pop(prefix, None)
        self._entries.pop(prefix, None)


class NoIndexCache:
    async def get(self, prefix: str) -> CachedListing:
        return CachedListing(listing=None, stamp="")

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        return None

    async def invalidate(self, prefix: str) -> None:
        return None
