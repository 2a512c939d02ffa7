"""What SQLite's postings hold of one file, and how many files hold a term.

Expected rows are written out here, not computed by the module under test (its
other tests compare the index with ``term_rows`` itself): a file's name is its
key's last part without ``.md``; a word's row packs each field's count at the
field's shift; a prefix row is the sum of its words' rows; a gram row holds 1;
indexing a file again writes only the rows that changed. ``term_frequency``
counts the files under the reach holding a word, a one-letter prefix (its own
row) or a longer prefix (a range of words).
"""

import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Write
from app.features.search.domain.text import WORD, Term
from app.infra.sqlite.search import ranges
from app.infra.sqlite.search_pending import EVERYWHERE, index_pending
from app.infra.sqlite.search_postings import (
    GRAM_MARK,
    PREFIX_MARK,
    analyse_row,
    index_file,
    term_rows,
)
from app.infra.sqlite.search_schema import ANALYSER_VERSION
from app.infra.sqlite.search_terms import term_frequency
from app.infra.sqlite.storage import open_sqlite_storage

AT = datetime(2026, 3, 1, tzinfo=UTC)
CHANGE = Change("write_file", "http", AT)
NAME, ALIASES, DESCRIPTION, CONTENT = 0, 12, 24, 36
"""Each field's shift in a packed row (``COUNT_BITS``)."""


def test_a_files_name_is_the_last_part_of_its_key_without_md() -> None:
    analysis = analyse_row("user/alice/notes/green.tea.md", b"", "", "[]")

    assert analysis.fields[0].words == Counter({"green": 1, "tea": 1})
    assert analysis.lengths == (2, 0, 0, 0)


def test_a_files_rows_pack_each_fields_count_and_sum_a_prefixs_words() -> None:
    content = "tea tea toast 乌龙".encode()
    analysis = analyse_row("user/alice/notes/tea.md", content, "tea", '["oolong"]')

    tea = 1 << NAME | 1 << DESCRIPTION | 2 << CONTENT
    assert term_rows(analysis) == {
        "tea": tea,
        "toast": 1 << CONTENT,
        "oolong": 1 << ALIASES,
        PREFIX_MARK + "t": tea + (1 << CONTENT),
        PREFIX_MARK + "o": 1 << ALIASES,
        GRAM_MARK + "乌": 1,
        GRAM_MARK + "龙": 1,
        GRAM_MARK + "乌龙": 1,
    }


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "w.db"


async def write(database: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (no description, no aliases); they are left pending."""
    meta = FileMetadata("", (), ("http",), AT)
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        for key, body in files.items():
            await storage.put(Write(key, body, meta, change=CHANGE))


async def test_indexing_an_unchanged_file_again_writes_its_document_row_only(
    database: Path,
) -> None:
    await write(database, {"user/alice/notes/tea.md": b"oolong tea, green tea\n"})
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        row = connection.execute(
            "SELECT key, data, description, aliases, version FROM memory_objects"
        ).fetchone()
        index_file(connection, row, ANALYSER_VERSION)
        before = connection.total_changes

        index_file(connection, row, ANALYSER_VERSION)

        assert connection.total_changes - before == 1
    finally:
        connection.close()


async def test_a_term_counts_the_files_under_the_reach_that_hold_it(
    database: Path,
) -> None:
    await write(
        database,
        {
            "user/alice/notes/n1.md": b"tea\n",
            "user/alice/notes/n2.md": b"tebow\n",
            "user/alice/notes/n3.md": b"teddy\n",
            "user/alice/notes/n4.md": b"tea teapot\n",
            "user/bob/notes/n5.md": b"tea\n",
        },
    )
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        while index_pending(connection, EVERYWHERE):
            pass
        alice = ranges(["user/alice/"])

        def files(text: str, prefix: bool) -> int:
            return term_frequency(connection, Term(WORD, text, prefix), alice)

        assert files("tea", False) == 2
        assert files("tea", True) == 2  # tebow and teddy are past "teb"
        assert files("te", True) == 4
        assert files("t", True) == 4  # its prefix row
        assert files("n", True) == 4  # the names
        assert files("tebow", False) == 1
    finally:
        connection.close()
