"""Any Unicode query: never an error but INVALID_ARGUMENT(query), never a hit
outside the caller's grants, and SQLite's postings rank exactly like the corpus."""

import asyncio
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tenchi.errors import AppError

from app.features.memory.schemas import WriteFile
from app.features.memory.use_cases.write_file import write_file
from app.features.search.schemas import SearchMemory
from app.features.search.use_cases.search_memory import search_memory
from app.infra.corpus_search_index import CorpusSearchIndex
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.port_wiring import open_storage
from app.infra.sqlite.storage import SqliteStorage
from app.server.context import AppContext
from app.shared.errors import invalid_argument
from app.shared.identity import Grant, Identity
from tests.support.contexts import context_over, with_services

EXAMPLES = int(os.environ.get("WENCHANG_FUZZ_EXAMPLES", "150"))
WORDS = ["oolong", "Café", "冻顶乌龙", "ชาไทย", "a:b", "NEAR(x)", "'; DROP", "-- *"]


def alice(context: AppContext) -> AppContext:
    grants = {"user": Grant("alice", "owner"), "team": Grant("t-1", "member")}
    return replace(context, identity=Identity(grants))


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[AppContext]]:
    """One SQLite database searched two ways: its postings, and cached corpora."""
    root: Path = tmp_path_factory.mktemp("search-property")
    loop = asyncio.new_event_loop()
    opened = open_storage(f"sqlite:///{root / 'w.db'}")
    storage = loop.run_until_complete(opened.__aenter__())
    assert isinstance(storage, SqliteStorage)
    cache = MemoryIndexCache(ttl=60)
    corpora = CorpusSearchIndex(storage, cache)
    base = context_over(storage, cache, search_index=corpora, cursor_key=b"k")
    for number, (entity, scope) in enumerate(
        [("alice", "user"), ("t-1", "team"), ("bob", "user")]
    ):
        writer = replace(base, identity=Identity({scope: Grant(entity, "owner")}))
        for index, word in enumerate(WORDS):
            request = WriteFile(
                scope=scope,
                area="notes",
                name=f"{word} {number}-{index}",
                content=f"- [stated] {word} {' '.join(WORDS[: index + 1])}\n",
                description=word,
                aliases=[word[::-1]],
                expected_version=None,
            )
            loop.run_until_complete(write_file(request, writer))
    postings = with_services(base, search_index=storage.search_index)
    yield [alice(postings), alice(base)]
    loop.run_until_complete(opened.__aexit__(None, None, None))
    loop.close()


def run(context: AppContext, query: str) -> list[tuple[str, str, float, str]] | str:
    try:
        found = asyncio.run(search_memory(SearchMemory(query=query), context))
    except AppError as error:
        assert error.definition is invalid_argument
        assert error.details["argument"] == "query"
        return "invalid"
    return [(h.scope, h.name, h.score, h.snippet) for h in found.hits]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(query=st.one_of(st.text(max_size=300), st.sampled_from(WORDS)))
def test_any_query_is_data(contexts: list[AppContext], query: str) -> None:
    postings, corpora = (run(context, query) for context in contexts)

    assert postings == corpora
    if postings == "invalid":
        assert not query.strip() or len(query) > 256
        return
    assert query.strip() and len(query) <= 256
    # bob's files (numbered 2) are never reached from alice's grants.
    assert not any(name.split(" ")[-1].startswith("2-") for _, name, *_ in postings)
