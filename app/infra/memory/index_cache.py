"""Index caches for one process, checked against the backend's change markers.

A listing is kept with the entity's marker read before it was listed, and
served only while the backend still holds that marker: a write or purge made
by any process replaces the marker, so no process serves a listing it missed.
Search corpora are kept the same way, beside the listings.
"""

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from app.features.memory.ports import CachedCorpus, CachedListing, ListedObject
from app.features.search.domain.corpus import Corpus
from app.infra.change_markers import ChangeMarkers, ProcessChangeMarkers

MAX_CORPORA = 256
"""Search corpora kept (least recently used go first): they hold file bodies."""


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
        self._corpora: OrderedDict[str, tuple[float, str, Corpus]] = OrderedDict()

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

    async def get_corpus(self, prefix: str) -> CachedCorpus:
        stamp = await self._markers.read(prefix)
        entry = self._corpora.get(prefix)
        if entry is None or entry[1] != stamp or entry[0] <= self._clock():
            return CachedCorpus(corpus=None, stamp=stamp)
        self._corpora.move_to_end(prefix)
        return CachedCorpus(corpus=entry[2], stamp=stamp)

    async def set_corpus(self, prefix: str, corpus: Corpus, *, stamp: str) -> None:
        if await self._markers.read(prefix) == stamp:
            self._corpora[prefix] = (self._clock() + self._ttl, stamp, corpus)
            self._corpora.move_to_end(prefix)
            while len(self._corpora) > MAX_CORPORA:
                self._corpora.popitem(last=False)

    async def invalidate(self, prefix: str, *, after_write: bool = False) -> None:
        # Nothing of the prefix is kept, so a purged entity leaves no trace here.
        self._entries.pop(prefix, None)
        self._corpora.pop(prefix, None)
        if not (after_write and self._markers.moved_by_writes):
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

    async def get_corpus(self, prefix: str) -> CachedCorpus:
        return CachedCorpus(corpus=None, stamp=await self._markers.read(prefix))

    async def set_corpus(self, prefix: str, corpus: Corpus, *, stamp: str) -> None:
        return None

    async def invalidate(self, prefix: str, *, after_write: bool = False) -> None:
        if not (after_write and self._markers.moved_by_writes):
            await self._markers.bump(prefix)
