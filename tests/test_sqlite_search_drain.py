"""The background drain indexes in small pieces (``DRAIN_BATCH``).

The drain's analysis holds the interpreter while it runs, so one piece of it
is bounded small and requests get their turn between pieces. Real database
files; the storages run without the background drain so each piece is the
test's own call. The drain's own loop runs over an index whose pieces the
test answers: it stops after the piece in progress when its storage closes,
and a piece that fails is logged and tried again at the next round.
"""

import asyncio
import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.sqlite.connection import BUSY_TIMEOUT_MS
from app.infra.sqlite.search_drain import open_search_connection, open_search_index
from app.infra.sqlite.search_pending import DRAIN_BATCH, EVERYWHERE, index_pending
from app.infra.sqlite.search_postings import analyse_row, term_rows
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage
from tests.support.sqlite_file import postings, sql

AT = datetime(2026, 3, 1, tzinfo=UTC)
CHANGE = Change("write_file", "http", AT)
META = FileMetadata("Drinks", (), ("http",), AT)
FILES, MOST = DRAIN_BATCH


def key(number: int) -> str:
    return f"user/alice/notes/n{number:03d}.md"


def pending(database: Path) -> set[str]:
    return {row[0] for row in sql(database, "SELECT key FROM search_pending")}


async def write(storage: SqliteStorage, count: int, body: bytes) -> list[str]:
    keys = [key(number) for number in range(count)]
    for each in keys:
        await storage.put(Write(each, body, META, change=CHANGE))
    return keys


def whole(database: Path, keys: set[str], body: bytes) -> None:
    for each in keys:
        assert postings(database, each) == term_rows(
            analyse_row(each, body, "Drinks", "[]")
        )


async def test_one_piece_of_the_drain_indexes_at_most_its_files(
    tmp_path: Path,
) -> None:
    database = tmp_path / "w.db"
    body = b"oolong tea\n"
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        keys = await write(storage, FILES + 5, body)

        assert await storage.search_index.drain()
        assert len(pending(database)) == 5
        assert await storage.search_index.drain() is False
        assert pending(database) == set()
    whole(database, set(keys), body)


async def test_one_piece_of_the_drain_stops_after_the_file_past_its_bytes(
    tmp_path: Path,
) -> None:
    database = tmp_path / "w.db"
    body = b"oolong tea\n" * (MOST // 11 // 2 + 1)  # two files pass the bound
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        keys = await write(storage, 3, body)

        assert await storage.search_index.drain()
        left = pending(database)
        assert len(left) == 1
        whole(database, set(keys) - left, body)
        assert postings(database, left.pop()) == {}


@pytest.mark.parametrize(("sizes", "indexed"), [((10, 10, 10), 2), ((10, 9, 10), 3)])
async def test_a_batch_ends_with_the_file_that_brings_it_to_its_bytes(
    tmp_path: Path, sizes: tuple[int, ...], indexed: int
) -> None:
    database = tmp_path / "w.db"
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        for number, size in enumerate(sizes):
            await storage.put(Write(key(number), b"x" * size, META, change=CHANGE))
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        more = index_pending(connection, EVERYWHERE, (len(sizes), 20))
    finally:
        connection.close()

    assert pending(database) == {key(n) for n in range(indexed, len(sizes))}
    assert more is (indexed < len(sizes))


def test_the_search_connection_waits_for_locks_and_syncs_normally(
    tmp_path: Path,
) -> None:
    connection = open_search_connection(str(tmp_path / "w.db"))
    try:
        pragma = {
            name: connection.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("busy_timeout", "synchronous", "secure_delete")
        }
        assert pragma == {
            "busy_timeout": BUSY_TIMEOUT_MS,
            "synchronous": 1,
            "secure_delete": 1,
        }
        assert connection.isolation_level is None
    finally:
        connection.close()


async def test_closing_stops_the_drain_after_the_piece_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    pieces: list[int] = []

    async def piece() -> bool:  # always more to do
        pieces.append(1)
        if len(pieces) == 1:
            started.set()
            await release.wait()
        if len(pieces) > 3:
            raise RuntimeError("a drain that went on past its close")
        return True

    async with open_search_index(str(tmp_path / "w.db"), drain_every=0.001) as index:
        monkeypatch.setattr(index, "drain", piece)
        await asyncio.wait_for(started.wait(), 10)
        asyncio.get_running_loop().call_soon(release.set)  # once closing began

    assert len(pieces) == 1


async def test_a_failed_piece_is_logged_and_the_next_round_drains_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    again = asyncio.Event()
    pieces: list[int] = []

    async def piece() -> bool:
        pieces.append(1)
        if len(pieces) == 1:
            raise RuntimeError("disk I/O error")
        again.set()
        return False

    caplog.set_level(logging.WARNING, "app.infra.sqlite.search_drain")
    async with open_search_index(str(tmp_path / "w.db"), drain_every=0.001) as index:
        monkeypatch.setattr(index, "drain", piece)
        await asyncio.wait_for(again.wait(), 10)

    logged = [r for r in caplog.records if r.name == "app.infra.sqlite.search_drain"]
    assert [(r.levelno, r.getMessage()) for r in logged] == [
        (logging.WARNING, "search drain failed")
    ]
    assert logged[0].exc_info is not None
    assert isinstance(logged[0].exc_info[1], RuntimeError)
