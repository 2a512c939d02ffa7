"""SQLite search never answers stale though writes only mark files pending.

A file is found as soon as the write that created or changed it returned, and
never after its delete or purge returned: here on real database files, through
two storages on one file (as two processes), a writer in another process, the
background drain, and an agent over MCP. Each storage but the drain's own test
runs without the background drain, so only the search can have indexed a file.
"""

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp.client import Client

from app.features.memory.ports import Change, FileMetadata, Write
from app.features.memory.schemas import PurgeMemory
from app.features.memory.use_cases.purge_memory import purge_memory
from app.features.search.domain.text import query_terms
from app.features.search.ports import SearchQuery
from app.infra.sqlite.search_pending import EVERYWHERE, index_pending
from app.infra.sqlite.search_postings import analyse_row, term_rows
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage
from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import http_session, ok, serve
from tests.support.sqlite_file import postings, sql

AT = datetime(2026, 3, 1, tzinfo=UTC)
CHANGE = Change("write_file", "http", AT)
META = FileMetadata("Drinks", (), ("http",), AT)
TEA = "user/alice/notes/tea.md"
REACH = ["user/alice/"]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "wenchang.db"


@pytest.fixture
async def storage(database: Path) -> AsyncGenerator[SqliteStorage]:
    async with open_sqlite_storage(str(database), search_drain_every=None) as opened:
        yield opened


async def found(
    storage: SqliteStorage, query: str, reach: list[str] = REACH
) -> list[str]:
    page = await storage.search_index.search(
        SearchQuery(reach, query_terms(query), None, 50)
    )
    return [hit.key for hit, _ in page.hits]


def rows(database: Path, table: str, prefix: str = "user/alice/") -> list[str]:
    """Keys under ``prefix`` in a search table, read by a connection of its own."""
    selected = sql(
        database,
        f"SELECT key FROM {table} WHERE key >= ? AND key < ? ORDER BY key",
        prefix,
        prefix[:-1] + "0",
    )
    return [key for (key,) in selected]


async def put(storage: SqliteStorage, content: str, version: str | None) -> str:
    write = Write(TEA, content.encode(), META, change=CHANGE)
    written = await storage.put_if_version(write, version)
    assert written is not None
    return written


async def test_a_write_is_found_by_the_next_search_with_the_words_it_has_then(
    storage: SqliteStorage, database: Path
) -> None:
    version = await put(storage, "- [stated] oolong\n", None)
    assert rows(database, "search_pending") == [TEA]  # marked, not yet indexed
    assert postings(database, TEA) == {}
    assert await found(storage, "oolong") == [TEA]
    assert rows(database, "search_pending") == []

    version = await put(storage, "- [stated] oolong\n- [stated] sencha\n", version)
    assert await found(storage, "sencha") == [TEA]  # an appended line
    version = await put(storage, "- [stated] gyokuro\n- [stated] sencha\n", version)
    assert await found(storage, "oolong") == []  # a replaced fact
    assert await found(storage, "gyokuro") == [TEA]

    analysis = analyse_row(
        TEA, b"- [stated] gyokuro\n- [stated] sencha\n", "Drinks", "[]"
    )
    assert postings(database, TEA) == term_rows(analysis)


async def test_a_delete_leaves_no_postings_and_no_mark_even_before_a_search(
    storage: SqliteStorage, database: Path
) -> None:
    version = await put(storage, "- [stated] oolong\n", None)
    assert await found(storage, "oolong") == [TEA]
    version = await put(storage, "- [stated] oolong twice\n", version)  # pending
    assert await storage.delete_if_version(TEA, version, change=CHANGE)

    for table in ("search_terms", "search_documents", "search_pending"):
        assert rows(database, table) == []
    assert await found(storage, "oolong") == []


async def test_a_purge_leaves_nothing_of_the_entity_in_any_search_table(
    tmp_path: Path, database: Path
) -> None:
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        version = await put(storage, "- [stated] oolong\n", None)
        assert await found(storage, "oolong") == [TEA]
        await put(storage, "- [stated] oolong again\n", version)  # left pending
        other = Write("user/alice/notes/new.md", b"sencha\n", META, change=CHANGE)
        await storage.put(other)  # never indexed
    settings = Settings(
        storage=f"sqlite:///{database}", tokens_file=str(tmp_path / "t.json")
    )
    async with create_lifespan(settings, surface="task")() as runtime:
        purge = PurgeMemory(scope="user", entity_id="alice", dry_run=False)
        assert (await purge_memory(purge, runtime.context)).objects == 2

    for table in ("search_terms", "search_documents", "search_pending"):
        assert rows(database, table) == []


async def test_a_write_through_one_connection_is_found_through_another(
    database: Path,
) -> None:
    async with AsyncExitStack() as stack:
        writer, searcher = [
            await stack.enter_async_context(
                open_sqlite_storage(str(database), search_drain_every=None)
            )
            for _ in range(2)
        ]
        assert await found(searcher, "oolong") == []
        version = await put(writer, "- [stated] oolong\n", None)
        assert await found(searcher, "oolong") == [TEA]
        version = await put(writer, "- [stated] sencha\n", version)
        assert await found(searcher, "oolong") == []
        assert await found(searcher, "sencha") == [TEA]
        assert await writer.delete_if_version(TEA, version, change=CHANGE)
        assert await found(searcher, "sencha") == []


WRITER = """
import asyncio, sys
from datetime import UTC, datetime
from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.sqlite.storage import open_sqlite_storage

async def main() -> None:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    meta = FileMetadata("Drinks", (), ("http",), at)
    write = Write(sys.argv[2], sys.argv[3].encode(), meta)
    async with open_sqlite_storage(sys.argv[1], search_drain_every=None) as storage:
        await storage.put(write)

asyncio.run(main())
"""


async def test_a_write_in_another_process_is_found_at_once(
    storage: SqliteStorage, database: Path
) -> None:
    assert await found(storage, "oolong") == []  # this process searched first

    command = [sys.executable, "-c", WRITER, str(database), TEA, "- oolong\n"]
    done = await asyncio.to_thread(subprocess.run, command, timeout=60, check=False)

    assert done.returncode == 0
    assert rows(database, "search_pending") == [TEA]
    assert await found(storage, "oolong") == [TEA]


async def test_a_search_indexes_only_its_reach_and_the_drain_the_rest(
    database: Path,
) -> None:
    bob = "user/bob/notes/tea.md"
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        await storage.put(Write(bob, b"oolong\n", META, change=CHANGE))
        await put(storage, "- [stated] oolong\n", None)
        assert await found(storage, "oolong") == [TEA]
        assert rows(database, "search_pending", "user/") == [bob]

        while await storage.search_index.drain():
            pass

    assert rows(database, "search_pending", "user/") == []
    assert postings(database, bob) == term_rows(
        analyse_row(bob, b"oolong\n", "Drinks", "[]")
    )


async def test_the_background_drain_indexes_pending_files_without_a_search(
    database: Path,
) -> None:
    async with open_sqlite_storage(str(database), search_drain_every=0.01) as storage:
        await put(storage, "- [stated] oolong\n", None)
        for _ in range(1000):  # at most 10 s: a wait for a state, not a timing
            if not rows(database, "search_pending"):
                break
            await asyncio.sleep(0.01)
        assert rows(database, "search_pending") == []
        assert postings(database, TEA)
        assert rows(database, "search_documents") == [TEA]


async def test_rows_written_without_the_triggers_are_indexed_before_a_search(
    database: Path,
) -> None:
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        await put(storage, "- [stated] oolong\n", None)
        assert await found(storage, "oolong") == [TEA]
    # A seeding script's connection: no triggers.
    sql(database, "UPDATE memory_objects SET data = ?, version = 'seeded'", b"sencha\n")

    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        assert await found(storage, "sencha") == [TEA]
        assert await found(storage, "oolong") == []


async def test_rows_deleted_without_the_triggers_are_forgotten_by_a_search(
    database: Path,
) -> None:
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        await put(storage, "- [stated] oolong\n", None)
        assert await found(storage, "oolong") == [TEA]
    sql(database, "DELETE FROM memory_objects")  # a script's connection

    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        assert await found(storage, "oolong") == []
    for table in ("search_terms", "search_documents", "search_pending"):
        assert rows(database, table) == []


async def test_a_batch_that_fails_is_rolled_back_whole_and_its_error_raised(
    database: Path, storage: SqliteStorage
) -> None:
    first = "user/alice/notes/green.md"
    await storage.put(Write(first, b"sencha\n", META, change=CHANGE))
    await put(storage, "- [stated] oolong\n", None)
    sql(database, "UPDATE memory_objects SET aliases = 'not JSON' WHERE key = ?", TEA)
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        with pytest.raises(json.JSONDecodeError):
            index_pending(connection, EVERYWHERE)  # green.md indexed, then tea.md
        assert not connection.in_transaction
    finally:
        connection.close()

    assert rows(database, "search_pending") == [first, TEA]
    assert rows(database, "search_terms") == []
    assert rows(database, "search_documents") == []


async def test_an_agent_finds_each_write_at_once_over_mcp(tmp_path: Path) -> None:
    token, _ = create_token(tmp_path / "t.json", parse_grants(["user=alice:owner"]))
    settings = Settings(
        storage=f"sqlite:///{tmp_path / 'w.db'}", tokens_file=str(tmp_path / "t.json")
    )
    where = {"scope": "user", "area": "notes", "name": "tea"}

    async def names(session: Client, query: str) -> list[str]:
        result = ok(await session.call_tool("search_memory", {"query": query}))
        return [hit["name"] for hit in result["hits"]]

    with serve(build_app(settings)) as url:
        async with http_session(url, token) as session:
            body: dict[str, object] = {
                "content": "- oolong\n",
                "description": "",
                "aliases": [],
            }
            made = ok(
                await session.call_tool(
                    "write_file", where | body | {"expected_version": None}
                )
            )
            assert await names(session, "oolong") == ["tea"]
            appended = ok(
                await session.call_tool(
                    "append_line",
                    where
                    | {
                        "line": "- [stated] sencha",
                        "expected_version": made["version"],
                    },
                )
            )
            assert await names(session, "sencha") == ["tea"]
            replaced = ok(
                await session.call_tool(
                    "replace_fact",
                    where
                    | {
                        "old_string": "oolong",
                        "new_string": "gyokuro",
                        "expected_version": appended["version"],
                    },
                )
            )
            assert await names(session, "oolong") == []
            ok(
                await session.call_tool(
                    "delete_file", where | {"expected_version": replaced["version"]}
                )
            )
            assert await names(session, "gyokuro") == []


async def test_closing_the_storage_stops_the_drain_between_two_batches(
    database: Path,
) -> None:
    keys = [f"user/alice/notes/n{i:03d}.md" for i in range(300)]
    async with open_sqlite_storage(str(database), search_drain_every=0.001) as storage:
        for key in keys:
            await storage.put(Write(key, b"oolong tea\n", META, change=CHANGE))
        await asyncio.sleep(0.01)  # the drain may be anywhere in its work

    # Every file is whole in the index or still marked, never half of either.
    pending = set(rows(database, "search_pending"))
    indexed = set(rows(database, "search_documents"))
    assert pending | indexed == set(keys)
    assert not pending & indexed
    for key in indexed:
        fresh = term_rows(analyse_row(key, b"oolong tea\n", "Drinks", "[]"))
        assert postings(database, key) == fresh
    assert all(postings(database, key) == {} for key in pending)


async def test_a_database_an_earlier_version_indexed_opens_with_its_postings(
    database: Path,
) -> None:
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        await put(storage, "- [stated] oolong\n", None)
        assert await found(storage, "oolong") == [TEA]
    before = postings(database, TEA)
    sql(
        database, "DROP TABLE search_pending"
    )  # as analyser 8 with eager triggers left it

    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        assert rows(database, "search_pending") == []
        assert await found(storage, "oolong") == [TEA]
        assert postings(database, TEA) == before
        await put(storage, "- [stated] sencha\n", await current_version(storage))
        assert await found(storage, "sencha") == [TEA]


async def current_version(storage: SqliteStorage) -> str:
    stored = await storage.get(TEA)
    assert stored is not None
    return stored.version
