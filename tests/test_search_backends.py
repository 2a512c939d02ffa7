"""Search gives the same hits, scores, order and snippets on every backend.

The same files go into memory, SQLite (its own postings, and the cached-corpus
path over the same database), the filesystem and the GCS emulator; every query
of a battery, page by page, must come back identical everywhere, before and
after updates and deletes.
"""

from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import FileMetadata, Storage, Write
from app.features.search.domain.ranking import Ranked
from app.features.search.domain.snippets import snippet
from app.features.search.domain.text import query_terms
from app.features.search.ports import SearchIndex, SearchQuery
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.sqlite.storage import SqliteStorage
from tests.support.gcs_emulator import GcsEmulator
from tests.support.storage_adapters import ADAPTERS, open_adapter

REACH = ("user/alice/", "team/t-1/")
MOMENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FILES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "user/alice/notes/Café Crème in Zürich.md": (
        "Met Jo at the café.\n",
        "Where we meet",
        ("meeting spot",),
    ),
    "user/alice/notes/tea.md": (
        "- [stated] Prefers oolong; dislikes cafe creme.\n" * 3,
        "Tea preferences",
        ("oolong", "乌龙"),
    ),
    "user/alice/notes/china.md": ("- [stated] 最喜欢冻顶乌龙茶。\n", "中文笔记", ()),
    "user/alice/notes/thai.md": ("- [observed] ชอบชาไทยมาก\n", "Thai", ()),
    "user/alice/system/guide.md": ("Search before you write: oolong, tea.\n", "", ()),
    "user/alice/projects/a-b.md": ('Quotes " and -dash a:b NEAR( x\n', "syntax", ()),
    "user/alice/projects/a.md": ("tea tea tea tea tea tea\n", "", ()),
    "user/alice/projects/b.md": ("tea tea tea tea tea tea\n", "", ()),
    "team/t-1/notes/oolong.md": ("Team order: oolong for Friday.\n", "Team tea", ()),
    "user/bob/notes/tea.md": ("oolong 冻顶 secret of bob\n", "bob", ("tea",)),
}
QUERIES = (
    "tea",
    "TEA",
    "oolo",
    "oolong tea",
    "cafe creme zurich",
    "Café",
    "冻顶",
    "乌龙",
    "ชา",
    "prefers oolong",
    '"',
    "-",
    "a:b",
    "NEAR(",
    "'; DROP TABLE memory_objects; --",
    "AND OR NOT *",
    "t",
    "secret",
    "nothing-matches-this",
    "coffee",
    "espresso",
)


async def seed(storage: Storage) -> None:
    for key, (content, description, aliases) in FILES.items():
        meta = FileMetadata(description, aliases, ("http",), MOMENT)
        await storage.put(Write(key, content.encode(), meta))


type Result = list[tuple[str, float, str]]


async def every_page(index: SearchIndex, query: str, limit: int = 2) -> Result:
    terms = query_terms(query)
    found: Result = []
    after: Ranked | None = None
    while True:
        page = await index.search(SearchQuery(REACH, terms, after, limit))
        found += [(r.key, r.score, snippet(d.texts(), terms)) for r, d in page.hits]
        if not page.more:
            return found
        after = page.hits[-1][0]


@dataclass(frozen=True, slots=True)
class Backend:
    storage: Storage
    index: SearchIndex
    cache: MemoryIndexCache | None


@pytest.fixture
async def backends(
    tmp_path: Path, gcs_emulator: GcsEmulator
) -> AsyncGenerator[dict[str, Backend]]:
    """Every backend's search index over its own copy of FILES."""
    async with AsyncExitStack() as stack:
        found: dict[str, Backend] = {}
        for kind in ADAPTERS:
            adapter = await stack.enter_async_context(
                open_adapter(kind, tmp_path / kind, gcs_emulator)
            )
            storage = adapter.storage
            await seed(storage)
            cache = MemoryIndexCache(ttl=60)
            found[kind] = Backend(storage, CorpusSearchIndex(storage, cache), cache)
            if isinstance(storage, SqliteStorage):
                found["sqlite-postings"] = Backend(storage, storage.search_index, None)
        yield found


async def results(backends: dict[str, Backend]) -> dict[str, Result]:
    return {
        f"{kind} {query!r}": await every_page(backend.index, query)
        for kind, backend in backends.items()
        for query in QUERIES
    }


def assert_identical(found: dict[str, Result]) -> None:
    for label, result in found.items():
        query = label.split(" ", 1)[1]
        assert result == found[f"memory {query}"], (
            label,
            result,
            found[f"memory {query}"],
        )


async def test_every_backend_gives_identical_pages(
    backends: dict[str, Backend],
) -> None:
    """Same hits, scores, order, snippets and page breaks on all backends."""
    found = await results(backends)

    assert_identical(found)
    assert [key for key, *_ in found["memory 'cafe creme zurich'"]] == [
        "user/alice/notes/Café Crème in Zürich.md"
    ]
    assert found["memory 'nothing-matches-this'"] == []
    tea = found["memory 'tea'"]
    assert tea[0][0] == "user/alice/notes/tea.md"  # the name beats six in content
    assert [(k, s) for k, s, _ in tea[2:4]] == [
        ("user/alice/projects/a.md", tea[2][1]),
        ("user/alice/projects/b.md", tea[2][1]),
    ]  # equal scores fall to key order
    assert found["memory '冻顶'"][0][2] == "- [stated] 最喜欢**冻顶**乌龙茶。"
    assert {k for k, *_ in found["memory 'oolo'"]} == {
        "user/alice/notes/tea.md",
        "user/alice/system/guide.md",
        "team/t-1/notes/oolong.md",
    }
    assert not any("bob" in k for r in found.values() for k, *_ in r)


async def test_updates_and_deletes_show_alike_everywhere(
    backends: dict[str, Backend],
) -> None:
    """A deleted file is gone and a rewritten one found by its new words only."""
    for backend in backends.values():
        await every_page(backend.index, "tea")  # every cache holds the old files
    for kind in ADAPTERS:
        storage = backends[kind].storage
        tea = await storage.get("user/alice/notes/tea.md")
        assert tea is not None
        assert await storage.delete_if_version("user/alice/notes/tea.md", tea.version)
        meta = FileMetadata("now about coffee", (), ("http",), MOMENT)
        await storage.put(Write("user/alice/projects/a.md", b"espresso only\n", meta))
    for backend in backends.values():
        if backend.cache is not None:
            # What every write through the use cases does.
            await backend.cache.invalidate("user/alice/")

    found = await results(backends)

    assert_identical(found)
    assert "user/alice/notes/tea.md" not in {k for r in found.values() for k, *_ in r}
    assert [k for k, *_ in found["memory 'coffee'"]] == ["user/alice/projects/a.md"]
    assert [k for k, *_ in found["memory 'espresso'"]] == ["user/alice/projects/a.md"]
