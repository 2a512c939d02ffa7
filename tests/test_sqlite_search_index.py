"""How a SQLite search reads its snapshot: the write lock only when it must.

A search indexes what is pending in its reach, then ranks in a read
transaction that holds nothing pending there. With nothing pending it never
waits for a writer; when writers keep marking files in its reach for
``ROUNDS`` rounds it indexes and ranks holding the write lock. A query with no
term or no reach is an empty page at once.
"""

import sqlite3
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

import app.infra.sqlite.search as search_module
from app.features.memory.ports import Change, FileMetadata, Write
from app.features.search.domain.text import query_terms
from app.features.search.ports import SearchPage, SearchQuery
from app.infra.sqlite.connection import open_sqlite_connection
from app.infra.sqlite.search import ROUNDS
from app.infra.sqlite.search_pending import SEARCH_BATCH, Bound, Where, index_pending
from app.infra.sqlite.search_schema import prepare_search
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage
from app.shared.errors import backend_unavailable
from tests.support.sqlite_file import postings, sql

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("Drinks", (), ("http",), AT)
TEA = "user/alice/notes/tea.md"
REACH = ["user/alice/"]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "wenchang.db"


@pytest.fixture
async def storage(database: Path) -> AsyncGenerator[SqliteStorage]:
    async with open_sqlite_storage(str(database), search_drain_every=None) as opened:
        change = Change("write_file", "http", AT)
        await opened.put(Write(TEA, b"- [stated] oolong\n", META, change=change))
        yield opened


async def found(storage: SqliteStorage, query: str) -> list[str]:
    page = await storage.search_index.search(
        SearchQuery(REACH, query_terms(query), None, 50)
    )
    return [hit.key for hit, _ in page.hits]


def pending(database: Path) -> list[str]:
    return [key for (key,) in sql(database, "SELECT key FROM search_pending")]


async def test_a_search_with_nothing_pending_never_waits_for_a_writer(
    database: Path, storage: SqliteStorage
) -> None:
    assert await found(storage, "oolong") == [TEA]  # indexed: nothing pending
    index = storage.search_index
    index._db.execute("PRAGMA busy_timeout = 0")  # pyright: ignore[reportPrivateUsage]
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        assert await found(storage, "oolong") == [TEA]  # a wait would fail at once
    finally:
        writer.execute("ROLLBACK")
        writer.close()


async def test_a_search_marks_stale_only_the_rows_under_its_reach(
    database: Path, storage: SqliteStorage
) -> None:
    bob = "user/bob/notes/tea.md"
    change = Change("write_file", "http", AT)
    await storage.put(Write(bob, b"oolong\n", META, change=change))
    while await storage.search_index.drain():
        pass
    # Another process's connection rewrites both files: no marks.
    sql(database, "UPDATE memory_objects SET data = ?, version = 'seeded'", b"sencha\n")

    async with open_sqlite_storage(str(database), search_drain_every=None) as other:
        assert await found(other, "sencha") == [TEA]

    assert pending(database) == []  # bob's row, past the reach, left to his searches


async def test_a_search_that_must_index_behind_a_writer_times_out(
    database: Path, storage: SqliteStorage
) -> None:
    index = storage.search_index
    index._db.execute("PRAGMA busy_timeout = 0")  # pyright: ignore[reportPrivateUsage]
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the file is pending: indexing must write
    try:
        with pytest.raises(AppError) as raised:
            await found(storage, "oolong")
    finally:
        writer.execute("ROLLBACK")
        writer.close()

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "timeout"
    assert await found(storage, "oolong") == [TEA]  # the lock gone


async def test_a_drain_with_nothing_pending_says_no_more(
    database: Path, storage: SqliteStorage
) -> None:
    assert await storage.search_index.drain() is False  # the one file, indexed
    assert pending(database) == []
    assert await storage.search_index.drain() is False


async def test_a_reach_that_keeps_changing_is_indexed_under_the_write_lock(
    database: Path, storage: SqliteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    marks: list[str] = []

    def index_then_write(
        connection: sqlite3.Connection, where: Where, bound: Bound = SEARCH_BATCH
    ) -> bool:
        more = index_pending(connection, where, bound)
        if not more:  # a writer changes the file before the search looks again
            sql(database, "INSERT OR IGNORE INTO search_pending VALUES (?)", TEA)
            marks.append(TEA)
        return more

    monkeypatch.setattr(search_module, "index_pending", index_then_write)

    assert await found(storage, "oolong") == [TEA]
    assert len(marks) == ROUNDS
    assert pending(database) == []  # the last mark indexed under the lock


async def test_a_query_without_terms_or_reach_is_an_empty_page(
    storage: SqliteStorage,
) -> None:
    for query in (
        SearchQuery(REACH, (), None, 5),
        SearchQuery([], query_terms("oolong"), None, 5),
    ):
        page = await storage.search_index.search(query)
        assert page == SearchPage(hits=(), more=False)
        assert page.more is False


async def test_a_hit_carries_the_file_as_stored(storage: SqliteStorage) -> None:
    meta = FileMetadata(
        "Tea notes", ("chai", "masala"), ("http", "mcp"), AT, AT.replace(year=2126)
    )
    key = "user/alice/notes/chai.md"
    await storage.put(Write(key, "- spiced chai ☕\n".encode(), meta))
    stored = await storage.get(key)
    assert stored is not None

    page = await storage.search_index.search(
        SearchQuery(REACH, query_terms("chai"), None, 5)
    )

    [(hit, document)] = page.hits
    assert (hit.key, document.key, document.version) == (key, key, stored.version)
    assert document.metadata == stored.metadata == meta
    assert document.content == "- spiced chai ☕\n"


async def test_a_page_says_more_only_when_a_hit_follows_it(
    storage: SqliteStorage,
) -> None:
    async def page(limit: int) -> tuple[int, bool]:
        found = await storage.search_index.search(
            SearchQuery(REACH, query_terms("oolong"), None, limit)
        )
        return len(found.hits), found.more

    assert await page(1) == (1, False)  # the one file holding it
    change = Change("write_file", "http", AT)
    await storage.put(Write("user/alice/notes/b.md", b"oolong\n", META, change=change))
    assert await page(1) == (1, True)
    assert await page(2) == (2, False)


async def test_a_database_opened_again_keeps_its_index(
    database: Path, storage: SqliteStorage
) -> None:
    assert await found(storage, "oolong") == [TEA]
    before = postings(database, TEA)

    async with open_sqlite_storage(str(database), search_drain_every=None):
        assert postings(database, TEA) == before
        assert sql(database, "SELECT key FROM search_documents") == [(TEA,)]


async def test_search_tables_made_while_another_process_writes_time_out(
    database: Path,
) -> None:
    async with open_sqlite_connection(str(database), schema="") as opened:
        await opened.execute("PRAGMA busy_timeout = 0")  # the wait, run out at once
        writer = sqlite3.connect(database, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(AppError) as raised:
                await prepare_search(opened)
        finally:
            writer.execute("ROLLBACK")
            writer.close()

        assert raised.value.definition is backend_unavailable
        assert raised.value.details["reason"] == "timeout"
        await prepare_search(opened)  # the lock gone, the same opening succeeds
    assert sql(database, "SELECT count(*) FROM search_pending") == [(0,)]
