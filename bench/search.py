"""Search latency at c=1: SQLite with N files in the caller's reach, and a cached
corpus (the path GCS, filesystem and in-memory storage take) over the same files.

``python -m bench.search [files] [queries]`` seeds a fresh database (rows written
directly, indexed by the first search), then times one query after another
through the search use case and prints p50/p95 per backend path. ``python -m
bench`` measures the same data end to end over HTTP (``search_rows``).
"""

import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from app.features.search.schemas import SearchMemory
from app.features.search.use_cases.search_memory import search_memory
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.sqlite.storage import open_sqlite_storage
from app.server.context import AppContext
from app.shared.identity import Grant, Identity
from tests.support.contexts import context_over

LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
WEIGHTS = [
    *(12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8),
    *(2.4, 2.4, 2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.2, 0.2, 0.1, 0.1),
]


def vocabulary(rng: random.Random) -> list[str]:
    lengths = [3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10]
    words = {
        "".join(rng.choices(LETTERS, WEIGHTS, k=rng.choice(lengths)))
        for _ in range(20_000)
    }
    return sorted(words)


@dataclass(frozen=True, slots=True)
class Document:
    area: str
    name: str
    content: bytes
    description: str
    aliases: list[str]


def documents(files: int, words: list[str], rng: random.Random) -> list[Document]:
    """Synthetic notes: Zipf-distributed words in names, descriptions and facts."""
    zipf = [1 / (rank + 1) for rank in range(len(words))]
    found: list[Document] = []
    for i in range(files):
        lines = (" ".join(rng.choices(words, zipf, k=10)) for _ in range(8))
        content = "".join(f"- [stated] {line}\n" for line in lines)
        name = " ".join(rng.choices(words, zipf, k=2))
        found.append(
            Document(
                f"area{i % 5}",
                f"{name} {i}",
                content.encode(),
                " ".join(rng.choices(words, zipf, k=8)),
                rng.choices(words, zipf, k=2),
            )
        )
    return found


def seed(path: Path, found: list[Document], entity: str = "reader") -> None:
    """Rows written directly (the search index catches up on the first search)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    for i, doc in enumerate(found):
        db.execute(
            "INSERT INTO memory_objects (key, data, description, aliases, sources, "
            "last_updated, version) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                f"user/{entity}/{doc.area}/{doc.name}.md",
                doc.content,
                doc.description,
                json.dumps(doc.aliases),
                '["http"]',
                "2026-01-01T00:00:00Z",
                f"v{i}",
            ),
        )
    db.execute("COMMIT")
    db.close()


def queries(words: list[str], rng: random.Random, count: int) -> list[str]:
    """1-3 topical words (the 5,000 most frequent), the last often cut short."""
    found: list[str] = []
    for _ in range(count):
        chosen = rng.sample(words[:5000], rng.choice([1, 2, 2, 3]))
        if rng.random() < 0.3 and len(chosen[-1]) > 4:
            chosen[-1] = chosen[-1][:4]
        found.append(" ".join(chosen))
    return found


async def timed(context: AppContext, asked: list[str]) -> list[float]:
    await search_memory(SearchMemory(query=asked[0]), context)  # warm up
    spent: list[float] = []
    for query in asked:
        start = time.perf_counter()
        await search_memory(SearchMemory(query=query), context)
        spent.append((time.perf_counter() - start) * 1000)
    return spent


def report(label: str, spent: list[float]) -> None:
    cuts = statistics.quantiles(spent, n=100)
    print(f"{label}: n={len(spent)} p50={cuts[49]:.1f} ms p95={cuts[94]:.1f} ms")


async def main(files: int, count: int) -> None:
    rng = random.Random(14)
    words = vocabulary(rng)
    rng.shuffle(words)
    with tempfile.TemporaryDirectory() as root:
        path = Path(root) / "search.db"
        async with open_sqlite_storage(str(path)):
            pass
        seed(path, documents(files, words, rng))
        asked = queries(words, rng, count)
        async with open_sqlite_storage(str(path)) as storage:
            cache = MemoryIndexCache(ttl=3600)
            base = context_over(
                storage,
                cache,
                search_index=CorpusSearchIndex(storage, cache),
                cursor_key=b"bench",
                identity=Identity({"user": Grant("reader", "owner")}),
            )
            postings = replace(base, search_index=storage.search_index)
            report(f"sqlite postings, {files} files", await timed(postings, asked))
            report(f"cached corpus, {files} files", await timed(base, asked))


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:3]]
    asyncio.run(main(*(arguments or [10_000, 300])))
