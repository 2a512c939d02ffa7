"""Search over storage without an index of its own: cached per-entity corpora.

A corpus is built from every file under an entity prefix (bodies read a few at
a time) and kept in the index cache under the listing's stamp, so the
invalidation every write makes drops it too.
"""

import asyncio

from app.features.memory.domain.keys import entity_prefix_of_reach
from app.features.memory.ports import IndexCache, ListedObject, Storage
from app.features.memory.ports.storage_reads import list_all
from app.features.search.domain.corpus import Corpus, SearchDocument, search_corpora
from app.features.search.domain.ranking import page_after
from app.features.search.ports import SearchPage, SearchQuery

READ_CONCURRENCY = 16


class CorpusSearchIndex:
    """The SearchIndex port over any Storage and IndexCache."""

    def __init__(self, storage: Storage, cache: IndexCache) -> None:
        self._storage = storage
        self._cache = cache

    async def search(self, query: SearchQuery) -> SearchPage:
        reach, terms = query.reach, query.terms
        if not terms or not reach:
            return SearchPage(hits=(), more=False)
        corpora = await asyncio.gather(
            *(self.corpus(entity_prefix_of_reach(p)) for p in reach)
        )
        ranked = search_corpora(list(zip(corpora, reach, strict=True)), terms)
        page, more = page_after(ranked, query.after, query.limit)
        documents = {d.key: d for corpus in corpora for d in corpus.documents}
        return SearchPage(hits=[(r, documents[r.key]) for r in page], more=more)

    async def corpus(self, prefix: str) -> Corpus:
        cached = await self._cache.get_corpus(prefix)
        if cached.corpus is not None:
            return cached.corpus
        listed = await list_all(self._storage, prefix)
        gate = asyncio.Semaphore(READ_CONCURRENCY)
        read = await asyncio.gather(*(self._read(item, gate) for item in listed))
        corpus = Corpus([document for document in read if document is not None])
        await self._cache.set_corpus(prefix, corpus, stamp=cached.stamp)
        return corpus

    async def _read(
        self, item: ListedObject, gate: asyncio.Semaphore
    ) -> SearchDocument | None:
        async with gate:
            stored = await self._storage.get(item.key)
        if stored is None:
            return None
        content = stored.data.decode(errors="replace")
        return SearchDocument(item.key, stored.version, stored.metadata, content)
