"""A database made with the rowid history layout keeps its history on SQLite.

Before history was clustered by key, ``memory_history`` had one ``seq`` for the
whole table and two indexes. Opening such a file moves every record into the
clustered table once (several openers at the same moment included), and its
pages, cursors and versions read back as they did.
"""

import asyncio
import sqlite3
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.sqlite.connection import open_sqlite_connection
from app.infra.sqlite.history import OBJECTS_TABLE
from app.infra.sqlite.history_table import prepare_history_table
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage
from tests.support.sqlite_file import sql

_ROWID_LAYOUT = """
CREATE TABLE memory_history (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    version TEXT NOT NULL,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL,
    description TEXT NOT NULL,
    aliases TEXT NOT NULL,
    sources TEXT NOT NULL,
    last_updated TEXT NOT NULL
);
CREATE INDEX memory_history_by_key ON memory_history (key, seq);
CREATE INDEX memory_history_by_age
    ON memory_history (key, julianday(last_updated));
"""
TEA = "user/alice/notes/tea.md"
COFFEE = "user/alice/notes/coffee.md"
# (key, version, content): interleaved, as two files written by turns leave them.
RECORDS = [
    (TEA, "t1", b"green\n"),
    (COFFEE, "c1", b"espresso\n"),
    (TEA, "t2", b"green\nblack\n"),
    (COFFEE, "c2", b"espresso\nlatte\n"),
    (TEA, "t3", b"oolong\n"),
]
NOW = datetime.now(UTC).replace(microsecond=0)
STAMP = NOW.isoformat()


def _old_database(path: Path) -> None:
    connection = sqlite3.connect(path)
    try:
        connection.executescript(OBJECTS_TABLE + ";" + _ROWID_LAYOUT)
        connection.executemany(
            "INSERT INTO memory_history (key, version, operation, actor, deleted, "
            "size, data, description, aliases, sources, last_updated) "
            "VALUES (?, ?, 'write_file', 'http', 0, ?, ?, 'd', '[]', '[]', ?)",
            [(key, v, len(data), data, STAMP) for key, v, data in RECORDS],
        )
        connection.commit()
    finally:
        connection.close()


def _schema(path: Path) -> list[tuple[str, str]]:
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT name, sql FROM sqlite_schema WHERE name LIKE 'memory_history%'"
        ).fetchall()
    finally:
        connection.close()
    return [(row[0], row[1]) for row in rows]


async def _versions(storage: SqliteStorage, key: str) -> list[str]:
    return [r.version for r in await storage.list_versions(key, after=None, limit=99)]


@pytest.mark.parametrize("attempt", range(30))
async def test_several_openers_move_the_old_history_once(
    tmp_path: Path, attempt: int
) -> None:
    """Three storages open the old file at once: every record is there once.

    Run 30 times: each opener first turns the rollback-journal file into WAL,
    and SQLite refuses one of two openers at once about 3 times in 100 (without
    the busy handler), which opening must outlast.
    """
    path = tmp_path / "wenchang.db"
    _old_database(path)

    async with AsyncExitStack() as stack:
        openers = [
            stack.enter_async_context(
                open_sqlite_storage(str(path), search_drain_every=None)
            )
            for _ in range(3)
        ]
        storages = await asyncio.gather(*openers)
        seen = [await _versions(storage, TEA) for storage in storages]

    assert seen == [["t3", "t2", "t1"]] * 3
    schema = _schema(path)
    assert [name for name, _ in schema] == ["memory_history"]
    assert "WITHOUT ROWID" in schema[0][1]


async def test_old_history_pages_versions_and_continues(tmp_path: Path) -> None:
    """Pages, cursors and contents read back; a new write becomes the newest."""
    path = tmp_path / "wenchang.db"
    _old_database(path)

    async with open_sqlite_storage(str(path), search_drain_every=None) as storage:
        first = await storage.list_versions(TEA, after=None, limit=2)
        rest = await storage.list_versions(TEA, after=first[-1].version, limit=2)
        content = await storage.get_version(COFFEE, "c1")
        meta = FileMetadata("d", (), (), NOW)
        write = Write(TEA, b"sencha\n", meta, change=Change("write_file", "mcp", NOW))
        written = await storage.put_if_version(write, None)
    # Opened again: nothing is moved twice.
    async with open_sqlite_storage(str(path), search_drain_every=None) as storage:
        tea = await _versions(storage, TEA)
        coffee = await _versions(storage, COFFEE)

    assert [r.version for r in first] == ["t3", "t2"]
    assert [r.version for r in rest] == ["t1"]
    assert content is not None and content.data == b"espresso\n"
    assert tea == [written, "t3", "t2", "t1"]
    assert coffee == ["c2", "c1"]


async def test_a_database_made_before_files_could_expire_gains_the_column(
    tmp_path: Path,
) -> None:
    """Its files read back as they were, and a file written now can expire."""
    path = tmp_path / "wenchang.db"
    before_expiry = OBJECTS_TABLE.replace(",\n    expires_at TEXT\n", "\n")
    assert "expires_at" not in before_expiry
    connection = sqlite3.connect(path)
    try:
        connection.executescript(before_expiry)
        connection.execute(
            "INSERT INTO memory_objects VALUES (?, ?, 'd', '[]', '[]', ?, 'v1')",
            (TEA, b"green\n", STAMP),
        )
        connection.commit()
    finally:
        connection.close()
    expires = NOW.replace(year=NOW.year + 1)
    meta = FileMetadata("d", (), (), NOW, expires)

    async with open_sqlite_storage(str(path), search_drain_every=None) as storage:
        old = await storage.get(TEA)
        version = await storage.put_if_version(Write(COFFEE, b"latte\n", meta), None)
        new = await storage.get(COFFEE)

    assert old is not None and (old.data, old.version) == (b"green\n", "v1")
    assert old.metadata.expires_at is None
    assert version is not None and new is not None
    assert new.metadata.expires_at == expires


async def test_a_clustered_history_is_left_as_it_is_when_opened_again(
    tmp_path: Path,
) -> None:
    """Only the rowid layout is moved: reopening keeps each record's count and
    age floor (a move would reset every floor to 0) and its table's text."""
    path = tmp_path / "wenchang.db"
    meta = FileMetadata("d", (), (), NOW)
    async with open_sqlite_storage(str(path), search_drain_every=None) as storage:
        version: str | None = None
        for body in (b"green\n", b"black\n"):
            write = Write(TEA, body, meta, change=Change("write_file", "mcp", NOW))
            version = await storage.put_if_version(write, version)
    rows = "SELECT key, seq, n, floor FROM memory_history ORDER BY key, seq"
    before, schema = sql(path, rows), _schema(path)
    async with open_sqlite_storage(str(path), search_drain_every=None) as storage:
        versions = await _versions(storage, TEA)

    assert len(versions) == 2 and versions[0] == version
    assert all(row[3] for row in before)  # a moved record's floor is 0
    assert sql(path, rows) == before
    assert _schema(path) == schema


async def test_a_move_that_fails_leaves_the_old_layout_and_no_lock(
    tmp_path: Path,
) -> None:
    """A record the clustered table refuses (here no description) fails the
    move: its error raised, the old table and its records as they were, the
    write lock released, and the same connection free to try again."""
    database = tmp_path / "wenchang.db"
    loose = _ROWID_LAYOUT.replace("description TEXT NOT NULL", "description TEXT")
    connection = sqlite3.connect(database)
    try:
        connection.executescript(OBJECTS_TABLE + ";" + loose)
        connection.execute(
            "INSERT INTO memory_history (key, version, operation, actor, deleted, "
            "size, data, description, aliases, sources, last_updated) "
            "VALUES (?, 'v1', 'write_file', 'http', 0, 1, x'41', NULL, '[]', '[]', ?)",
            (TEA, STAMP),
        )
        connection.commit()
    finally:
        connection.close()
    before = _schema(database)

    async with open_sqlite_connection(str(database), schema=OBJECTS_TABLE) as opened:
        with pytest.raises(sqlite3.IntegrityError):
            await prepare_history_table(opened)

        assert not opened.in_transaction
        assert _schema(database) == before
        assert sql(database, "SELECT version FROM memory_history") == [("v1",)]
        other = sqlite3.connect(database, isolation_level=None, timeout=0)
        try:
            other.execute("UPDATE memory_history SET description = 'd'")  # not locked
        finally:
            other.close()
        await prepare_history_table(opened)
    assert "WITHOUT ROWID" in dict(_schema(database))["memory_history"]
