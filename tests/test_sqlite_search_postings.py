"""SQLite's postings after any sequence of writes and a search are exactly a
fresh index.

A write marks its file pending; the search indexes it, rewriting only the
postings rows that differ from what the index holds (terms gone, counts
changed, terms new). Whatever the edits, what the database holds for a file
(postings, field lengths and runs) must equal what indexing the file from
scratch gives, and nothing may stay of a deleted file.
"""

import asyncio
import json
import os
import sqlite3
import uuid
from collections.abc import AsyncGenerator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.features.memory.domain.edits import appended
from app.features.memory.ports import Change, FileMetadata, Storage, Write
from app.features.search.domain.text import query_terms
from app.features.search.ports import SearchQuery
from app.infra.port_wiring import open_storage
from app.infra.sqlite.search_postings import analyse_row, term_rows
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage
from tests.support.sqlite_file import postings

EXAMPLES = int(os.environ.get("WENCHANG_FUZZ_EXAMPLES", "150"))

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


async def searched(storage: Storage, key: str = KEY) -> None:
    """A search of the file's area: it indexes what is pending there first."""
    reach = [key.rsplit("/", 1)[0] + "/"]
    query = SearchQuery(reach, query_terms("tea"), None, 5)
    assert isinstance(storage, SqliteStorage)
    await storage.search_index.search(query)


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

        await searched(storage)
        assert postings(database, KEY) == want

    meta = FileMetadata("Tea", (), ("http",), AT)
    await storage.put(Write(KEY, b"espresso now\n", meta))  # replaced whole
    want = fresh("espresso now\n", "Tea", ())
    await searched(storage)
    assert postings(database, KEY) == want


async def test_a_deleted_file_leaves_no_postings_and_a_new_one_starts_clean(
    storage: Storage, tmp_path: Path
) -> None:
    database = tmp_path / "wenchang.db"
    meta = FileMetadata("Tea", ("oolong",), ("http",), AT)
    for key in (KEY, OTHER):
        await storage.put(Write(key, b"oolong tea\n", meta, change=CHANGE))
    await searched(storage)
    stored = await storage.get(KEY)
    assert stored is not None

    assert await storage.delete_if_version(KEY, stored.version, change=CHANGE)

    assert postings(database, KEY) == {}
    created = await storage.put_if_version(
        Write(KEY, b"green\n", FileMetadata("", (), ("http",), AT)), None
    )
    assert created is not None
    await searched(storage)
    assert postings(database, KEY) == fresh("green\n", "", ())
    assert postings(database, OTHER) == fresh("oolong tea\n", "Tea", ("oolong",), OTHER)


type Row = tuple[dict[str, int], tuple[Any, ...]]


def document(database: Path, key: str) -> Row:
    """(postings rows, lengths and runs) of ``key``'s document."""
    connection = sqlite3.connect(database)
    try:
        row = connection.execute(
            "SELECT len_name, len_aliases, len_description, len_content, "
            "runs_name, runs_aliases, runs_description, runs_content "
            "FROM search_documents WHERE key = ?",
            (key,),
        ).fetchone()
    finally:
        connection.close()
    return postings(database, key), tuple(row)


def fresh_document(
    data: bytes, description: str, key: str, aliases: tuple[str, ...] = ()
) -> Row:
    analysis = analyse_row(key, data, description, json.dumps(list(aliases)))
    postings = term_rows(analysis)
    fields = (*analysis.lengths, *(f.runs for f in analysis.fields))
    return postings, fields


PIECES = [*"ab xyz-.", "tea", "Café", "ß", "½", "e\u0301", "\u0301", "茶", "ชา"]
LINE_TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
LINES = st.lists(LINE_TEXT, max_size=6)
type Edit = tuple[str, Any, Any]
EDIT: st.SearchStrategy[Edit] = st.one_of(
    st.tuples(st.just("append"), LINE_TEXT, st.none()),
    st.tuples(st.just("replace"), st.integers(0, 8), LINE_TEXT),
    st.tuples(st.just("insert"), st.integers(0, 8), LINES),
    st.tuples(st.just("delete"), st.integers(0, 8), st.integers(1, 3)),
    st.tuples(st.just("rewrite"), LINES, st.booleans()),
    st.tuples(st.just("describe"), LINE_TEXT, st.none()),
    st.tuples(st.just("bytes"), st.integers(0, 8), st.binary(max_size=8)),
    # Text glued to either end of a line: the kept head or tail ends mid-word.
    st.tuples(st.just("glue"), st.integers(0, 8), st.tuples(LINE_TEXT, LINE_TEXT)),
    st.tuples(st.just("alias"), LINE_TEXT, st.none()),
)


async def test_a_row_written_without_the_triggers_is_indexed_after_the_next_write(
    storage: Storage, tmp_path: Path
) -> None:
    database = tmp_path / "wenchang.db"
    meta = FileMetadata("Tea", (), ("http",), AT)
    version = await storage.put_if_version(Write(KEY, b"oolong\n", meta), None)
    connection = sqlite3.connect(database)  # no triggers: the index goes stale
    with connection:
        connection.execute(
            "UPDATE memory_objects SET data = ?, version = 'foreign' WHERE key = ?",
            (b"green tea\n", KEY),
        )
    connection.close()
    assert version is not None

    # The same body again: the write marks the file pending.
    write = Write(KEY, b"green tea\n", meta, change=CHANGE)
    assert await storage.put_if_version(write, "foreign") is not None

    await searched(storage)
    assert document(database, KEY) == fresh_document(b"green tea\n", "Tea", KEY)


LINE_EDITS = ("replace", "insert", "delete", "bytes", "glue")


def edited(content: bytes, edit: Edit) -> bytes:
    """``content`` after one edit ("describe" and "alias" change metadata)."""
    kind, first, second = edit
    lines = content.split(b"\n")
    at = (
        int(first) % len(lines)
        if kind in ("replace", "insert", "delete", "bytes")
        else 0
    )
    match kind:
        case "append":
            return appended(content.decode(errors="replace"), first).encode()
        case "replace":
            lines[at] = second.encode()
        case "insert":
            lines[at:at] = [line.encode() for line in second]
        case "delete":
            del lines[at : at + second]
        case "rewrite":
            return ("\n".join(first) + "\n" * second).encode()
        case "bytes":
            lines[at] += second
        case "glue":
            lines[at] = second[0].encode() + lines[at] + second[1].encode()
        case _:
            return content
    return b"\n".join(lines)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, ...]]:
    """One database for every example (each on its own file), and its loop."""
    root = tmp_path_factory.mktemp("postings-property")
    loop = asyncio.new_event_loop()
    opened = open_storage(f"sqlite:///{root / 'w.db'}")
    storage = loop.run_until_complete(opened.__aenter__())
    yield storage, root / "w.db", loop
    loop.run_until_complete(opened.__aexit__(None, None, None))
    loop.close()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(start=LINES, edits=st.lists(EDIT, min_size=1, max_size=8))
def test_any_sequence_of_edits_leaves_exactly_a_fresh_index(
    shared: tuple[Any, ...], start: list[str], edits: list[Edit]
) -> None:
    storage, database, loop = shared
    key = f"user/alice/notes/{uuid.uuid4().hex}.md"
    content, description, aliases = b"", "Tea", ("tea",)
    version = None
    for edit in [("rewrite", start, True), *edits]:
        content = edited(content, edit)
        description = str(edit[1]) if edit[0] == "describe" else description
        aliases = (str(edit[1]),) if edit[0] == "alias" else aliases
        meta = FileMetadata(description, aliases, ("http",), AT)
        write = Write(key, content, meta, change=CHANGE)
        version = loop.run_until_complete(storage.put_if_version(write, version))
        assert version is not None

        loop.run_until_complete(searched(storage, key))
        want = fresh_document(content, description, key, aliases)
        assert document(database, key) == want


OLD_LAYOUT = """
CREATE TABLE search_documents (
    key TEXT PRIMARY KEY, version TEXT NOT NULL, analyser INTEGER NOT NULL,
    len_name INTEGER NOT NULL, len_aliases INTEGER NOT NULL,
    len_description INTEGER NOT NULL, len_content INTEGER NOT NULL,
    runs_name TEXT NOT NULL, runs_aliases TEXT NOT NULL,
    runs_description TEXT NOT NULL, runs_content TEXT NOT NULL, terms TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE search_terms (
    term TEXT NOT NULL, key TEXT NOT NULL, counts INTEGER NOT NULL,
    PRIMARY KEY (term, key)
) WITHOUT ROWID;
INSERT INTO search_terms VALUES ('stale', 'user/alice/notes/tea.md', 1);
"""


async def test_a_database_indexed_by_word_first_is_indexed_again(
    tmp_path: Path,
) -> None:
    database = tmp_path / "wenchang.db"
    url = f"sqlite:///{database}"
    async with open_storage(url) as storage:
        meta = FileMetadata("Tea", (), ("http",), AT)
        await storage.put(Write(OTHER, b"oolong tea\n", meta, change=CHANGE))
    connection = sqlite3.connect(database)  # as analyser 7 left it
    with connection:
        connection.executescript(
            "DROP TABLE search_terms; DROP TABLE search_documents;" + OLD_LAYOUT
        )
    connection.close()

    async with open_sqlite_storage(str(database)) as storage:
        assert postings(database, KEY) == {}  # the old rows are gone
        terms = query_terms("oolong")
        query = SearchQuery(["user/alice/"], terms, None, 5)
        page = await storage.search_index.search(query)
        meta = FileMetadata("Tea", (), ("http",), AT)
        await storage.put(Write(KEY, b"green tea\n", meta, change=CHANGE))
        await searched(storage)

    assert [hit.key for hit, _ in page.hits] == [OTHER]
    assert postings(database, OTHER) == fresh("oolong tea\n", "Tea", (), OTHER)
    assert document(database, KEY) == fresh_document(b"green tea\n", "Tea", KEY)
