"""The background drain indexes in small pieces (``DRAIN_BATCH``).

The drain's analysis holds the interpreter while it runs, so one piece of it
is bounded small and requests get their turn between pieces. Real database
files; the storages run without the background drain so each piece is the
test's own call.
"""

from datetime import UTC, datetime
from pathlib import Path

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.sqlite.search_pending import DRAIN_BATCH
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
