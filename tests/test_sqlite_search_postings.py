"""SQLite's postings after any sequence of writes are exactly a fresh index.

A write rewrites only the postings it changed (terms gone, counts changed, terms
new); whatever the edits, what the database holds for a file must equal what
indexing the file from scratch gives, and nothing may stay of a deleted file.
"""

import json
import sqlite3
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Storage, Write
from app.infra.port_wiring import open_storage
from app.infra.sqlite_search_schema import analyse_row, term_rows

KEY = "user/alice/notes/tea.md"
OTHER = "user/alice/notes/coffee.md"
AT = datetime(2026, 3, 1, tzinfo=UTC)
CHANGE = Change("write_file", "http", AT)
EDITS: list[tuple[str, str, tuple[str, ...]]] = [
    ("- [stated] Prefers oolong tea.\n", "Tea", ("oolong",)),
    ("- [stated] Prefers oolong tea.\n- [stated] Tea twice a day.\n", "Tea", ()),
    ("- [stated] Prefers green tea.\n- [stated] Tea twice a day.\n", "Tea", ()),
    ("- [stated] Prefers green tea.\n- [stated] 最喜欢冻顶乌龙茶。\n", "茶", ("乌龙",)),
    ("- [observed] ชอบชาไทยมาก ☕ tea tea tea\n", "Thai tea", ("ชา", "tea")),
    ("", "", ()),
    ("- [stated] Prefers green tea.\n", "Tea preferences", ("green", "green")),
]


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncGenerator[Storage]:
    async with open_storage(f"sqlite:///{tmp_path / 'wenchang.db'}") as opened:
        yield opened


def indexed(database: Path, key: str) -> tuple[dict[str, int], dict[str, int]]:
    """(postings rows, the document row's term list) of ``key``."""
    connection = sqlite3.connect(database)
    try:
        rows = connection.execute(
            "SELECT term, counts FROM search_terms WHERE key = ?", (key,)
        ).fetchall()
        document = connection.execute(
            "SELECT terms FROM search_documents WHERE key = ?", (key,)
        ).fetchall()
    finally:
        connection.close()
    return dict(rows), json.loads(document[0][0]) if document else {}


def fresh(
    content: str, description: str, aliases: tuple[str, ...], key: str = KEY
) -> dict[str, int]:
    analysis = analyse_row(key, content.encode(), description, json.dumps(aliases))
    return term_rows(analysis)


async def test_every_write_leaves_exactly_a_fresh_index_of_the_file(
    storage: Storage, tmp_path: Path
) -> None:
    database = tmp_path / "wenchang.db"
    version: str | None = None
    for content, description, aliases in EDITS:
        meta = FileMetadata(description, aliases, ("http",), AT)
        write = Write(KEY, content.encode(), meta, change=CHANGE)
        version = await storage.put_if_version(write, version)
        assert version is not None
        want = fresh(content, description, aliases)

        assert indexed(database, KEY) == (want, want)

    meta = FileMetadata("Tea", (), ("http",), AT)
    await storage.put(Write(KEY, b"espresso now\n", meta))  # replaced whole
    want = fresh("espresso now\n", "Tea", ())
    assert indexed(database, KEY) == (want, want)


async def test_a_deleted_file_leaves_no_postings_and_a_new_one_starts_clean(
    storage: Storage, tmp_path: Path
) -> None:
    database = tmp_path / "wenchang.db"
    meta = FileMetadata("Tea", ("oolong",), ("http",), AT)
    for key in (KEY, OTHER):
        await storage.put(Write(key, b"oolong tea\n", meta, change=CHANGE))
    stored = await storage.get(KEY)
    assert stored is not None

    assert await storage.delete_if_version(KEY, stored.version, change=CHANGE)

    assert indexed(database, KEY) == ({}, {})
    created = await storage.put_if_version(
        Write(KEY, b"green\n", FileMetadata("", (), ("http",), AT)), None
    )
    assert created is not None
    assert indexed(database, KEY) == (fresh("green\n", "", ()),) * 2
    other = fresh("oolong tea\n", "Tea", ("oolong",), OTHER)
    assert indexed(database, OTHER) == (other, other)
