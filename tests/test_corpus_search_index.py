"""Search over storage without an index of its own (``CorpusSearchIndex``).

No terms, or no reach, is no hits, and reads no file. A file's bytes that are
not UTF-8 are searched with U+FFFD in their place, and a hit carries the file's
version.
"""

from datetime import UTC, datetime

from app.features.memory.ports import FileMetadata, Write
from app.features.search.domain.text import query_terms
from app.features.search.ports import SearchQuery
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage

META = FileMetadata("Tea", (), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
TEA = "user/ann/notes/tea.md"
REACH = ("user/ann/",)


async def index_over(
    data: bytes, cache: MemoryIndexCache | None = None
) -> tuple[CorpusSearchIndex, str]:
    storage = MemoryStorage()
    version = await storage.put(Write(TEA, data, META))
    return CorpusSearchIndex(storage, cache or MemoryIndexCache(ttl=30)), version


async def test_no_terms_or_no_reach_is_no_hits_and_reads_no_file() -> None:
    cache = MemoryIndexCache(ttl=30)
    index, _ = await index_over(b"sencha is a green tea", cache)

    for query in (
        SearchQuery(REACH, (), None, 10),
        SearchQuery((), query_terms("sencha"), None, 10),
    ):
        page = await index.search(query)
        assert (list(page.hits), page.more) == ([], False)
        assert page.more is False
    assert (await cache.get_corpus(REACH[0])).corpus is None  # no corpus was built


async def test_bytes_that_are_not_utf8_are_searched_as_replacement_characters() -> None:
    index, version = await index_over(b"sencha \xff green")

    page = await index.search(SearchQuery(REACH, query_terms("green"), None, 10))

    [(_, document)] = page.hits
    assert (document.key, document.version) == (TEA, version)
    assert document.content == "sencha \ufffd green"
