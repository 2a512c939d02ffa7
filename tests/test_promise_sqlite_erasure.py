"""SQLite overwrites what it deletes (docs/decisions.md: ``secure_delete`` is on).

A file whose text has reached the database file (a checkpoint, which SQLite also
runs on its own) is deleted over HTTP with history kept to one record (the
tombstone, which holds no content). Once the server stops, no byte of that text
is left in the database file: its row, its version record and its search
postings were deleted and their bytes overwritten, not merely marked free.
(Debian's SQLite turns ``secure_delete`` on by default; the test fails when the
service turns it off.)
"""

import sqlite3
from pathlib import Path

from tests.http_support import FILE, file_body, if_match, open_api

CANARY = "zqxvwkanarie"


def checkpoint(database: Path) -> None:
    """Copy the WAL into the database file now, as SQLite does every 1000 pages."""
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(FULL)").fetchall()
    connection.close()


async def test_a_deleted_files_text_leaves_no_byte_in_the_database(
    tmp_path: Path,
) -> None:
    database = tmp_path / "wenchang.db"
    async with open_api(
        tmp_path,
        storage=f"sqlite:///{database}",
        history_max_versions=1,
        max_file_bytes=4096,
    ) as api:
        made = await api.http.put(
            FILE,
            json=file_body(f"- [stated] Password hint {CANARY}.\n", "Hints"),
            headers=api.alice | {"If-None-Match": "*"},
        )
        assert made.status_code == 201, made.text
        version = made.headers["ETag"].strip('"')
        checkpoint(database)
        assert CANARY.encode() in database.read_bytes()
        deleted = await api.http.delete(FILE, headers=api.alice | if_match(version))
        assert deleted.status_code == 204, deleted.text
        found = await api.http.get(
            "/v1/search", params={"q": CANARY}, headers=api.alice
        )
        assert found.json()["hits"] == []
        history = await api.http.get(f"{FILE}/versions", headers=api.alice)
        assert [e["deleted"] for e in history.json()["entries"]] == [True]

    # The last connection to close checkpoints the WAL into the database file.
    assert not Path(f"{database}-wal").exists()
    assert CANARY.encode() not in database.read_bytes()
