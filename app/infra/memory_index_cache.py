"""Index caches for one process: a TTL cache, and one that never keeps anything.

The TTL cache also keeps search corpora under the same stamps, so the one
invalidation every write makes drops a listing and a corpus together.
"""

import itertools
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from app.features.memory.ports import CachedCorpus, CachedListing, ListedObject
from app.features.search.domain.corpus import Corpus

MAX_CORPORA = 256
"""Search corpora kept (least recently used go first): they hold file bodies."""


class MemoryIndexCache:
    def __init__(
        self, *, ttl: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[str, tuple[float, str, Sequence[ListedObject]]] = {}
        self._stamps: dict[str, str] = {}
        self._corpora: OrderedDict[str, tuple[float, str, Corpus]] = OrderedDict()
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

    async def get_corpus(self, prefix: str) -> CachedCorpus:
        stamp = self._stamp(prefix)
        entry = self._corpora.get(prefix)
        if entry is None or entry[1] != stamp or entry[0] <= self._clock():
            return CachedCorpus(corpus=None, stamp=stamp)
        self._corpora.move_to_end(prefix)
        return CachedCorpus(corpus=entry[2], stamp=stamp)

    async def set_corpus(self, prefix: str, corpus: Corpus, *, stamp: str) -> None:
        if self._stamps.get(prefix) == stamp:
            self._corpora[prefix] = (self._clock() + self._ttl, stamp, corpus)
            self._corpora.move_to_end(prefix)
            while len(self._corpora) > MAX_CORPORA:
                self._corpora.popitem(last=False)

    async def invalidate(self, prefix: str) -> None:
        # Forgetting the stamp also rejects a racing set: stamps never repeat.
        # Nothing of the prefix is kept, so a purged entity leaves no trace here.
        self._stamps.pop(prefix, None)
        self._entries.pop(prefix, None)
        self._corpora.pop(prefix, None)


class NoIndexCache:
    async def get(self, prefix: str) -> CachedListing:
        return CachedListing(listing=None, stamp="")

    async def get_corpus(self, prefix: str) -> CachedCorpus:
        return CachedCorpus(corpus=None, stamp="")

    async def set_corpus(self, prefix: str, corpus: Corpus, *, stamp: str) -> None:
        return None

    async def set(
        self, prefix: str, listing: Sequence[ListedObject], *, stamp: str
    ) -> None:
        return None

    async def invalidate(self, prefix: str) -> None:
        return None
