"""A SQLite file for adapter tests: its storage opened as the server opens it, and
one SQL statement through a connection of its own."""

import sqlite3
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.infra.change_markers import SqliteChangeMarkers, open_sqlite_change_markers
from app.infra.sqlite.group_commit import GroupCommit
from app.infra.sqlite.storage import SqliteStorage, open_sqlite_storage


@dataclass
class Opened:
    database: Path
    storage: SqliteStorage
    group: GroupCommit
    markers: SqliteChangeMarkers
    staged: list[int]
    """One entry per write that told the audit log it staged an event."""


@asynccontextmanager
async def opened_database(tmp_path: Path) -> AsyncGenerator[Opened]:
    """Storage and change markers on one new file, sharing it with the audit log."""
    database = tmp_path / "wenchang.db"
    async with (
        open_sqlite_storage(str(database)) as storage,
        open_sqlite_change_markers(str(database)) as markers,
    ):
        staged: list[int] = []
        assert await storage.share_audit_log(str(database), lambda: staged.append(1))
        yield Opened(database, storage, storage.group_commit, markers, staged)


def sql(database: Path, statement: str, *parameters: object) -> list[Any]:
    """Run ``statement`` as another process would see the file; its rows."""
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        return connection.execute(statement, parameters).fetchall()
    finally:
        connection.close()


async def fail_commits(opened: Opened, when: str = "") -> None:
    """Make each COMMIT after an insert into memory_objects (``when`` it
    matches) fail: the trigger breaks a foreign key checked only at COMMIT."""
    sql(opened.database, "CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    sql(
        opened.database,
        "CREATE TABLE child (parent INTEGER "
        "REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)",
    )
    sql(
        opened.database,
        "CREATE TRIGGER poison_at_commit AFTER INSERT ON memory_objects "
        f"{when} BEGIN INSERT INTO child VALUES (1); END",
    )
    await opened.group.call(lambda db: db.execute("PRAGMA foreign_keys = ON"))


def postings(database: Path, key: str) -> dict[str, int]:
    """The search postings rows of ``key``: term -> counts."""
    return dict(
        sql(database, "SELECT term, counts FROM search_terms WHERE key = ?", key)
    )
