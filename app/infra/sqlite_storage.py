"""SQLite storage: one table in WAL mode, every port method one statement.

An edit in place (``edit_in_place``, ``sqlite_edits``) is the exception: its
read and guarded write are one job of the connection's thread, one transaction.

Triggers fill version history (``sqlite_history``), mark the file pending for
search (``sqlite_search_schema``) and move the entity's change marker
(``change_markers``) inside the statement that changes a file.

One connection serialises this process's statements (a read by key runs on the
loop's thread, ``sqlite_point_reads``); processes share the file, each write one
compare-and-swap statement. Writes that arrive while another commits share one
transaction (``sqlite_group_commit``); ``synchronous=FULL`` keeps them.
"""

import sqlite3
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from app.features.memory.domain import format_timestamp
from app.features.memory.ports import (
    Change,
    HistoryRetention,
    ListedObject,
    StoredObject,
    VersionRecord,
    Write,
)
from app.shared.errors import backend_unavailable_error

from . import sqlite_audit_events as audit
from .change_markers import database_id, note_marked, prepare_markers
from .sqlite_connection import (
    DEFAULT_SYNCHRONOUS,
    Synchronous,
    fetch_rows,
    open_sqlite_connection,
    translate_sqlite_error,
)
from .sqlite_edits import GET, INSERT_NEW, UPDATE_AT, Edit, EditJob
from .sqlite_group_commit import GroupCommit
from .sqlite_history import (
    OBJECTS_TABLE,
    history_page,
    history_version,
    prepare_history,
)
from .sqlite_point_reads import PointReads, open_point_reads
from .sqlite_rows import (
    COLUMNS,
    WRITTEN,
    change_values,
    listed_from,
    new_version,
    stored_from,
    upper_bound,
    written_values,
)
from .sqlite_search import SqliteSearchIndex
from .sqlite_search_drain import DRAIN_SECONDS, open_search_index
from .sqlite_search_schema import prepare_search


class SqliteStorage:
    def __init__(
        self,
        connection: aiosqlite.Connection,
        search_index: SqliteSearchIndex,
        reads: PointReads,
        *,
        database: str,
    ) -> None:
        self._db, self._reads = connection, reads
        self.keeps_call_keys = False  # answered after COMMIT: no outcome is unknown
        self.group_commit = GroupCommit(connection)
        """Runs every write statement (tests and the bench read its counter)."""
        self._database = database
        self.search_index = search_index
        """Ranks the files of this database, indexing the pending ones first."""
        self._staged: audit.Staged | None = None
        self._held = audit.HeldEvents()

    async def share_audit_log(self, path: str, staged: audit.Staged) -> bool:
        """Commit each mutation's audit event with its write if the log is ``path``.

        ``staged`` is told of each event a write staged (the log moves them).
        """
        held = await audit.install_audit_triggers(self._db, path)
        if held is not None:
            self._staged, self._held = staged, held
        return self._staged is not None

    async def _write(
        self,
        key: str,
        sql: str,
        recorded: bool,
        values: Callable[[str | None], Any],
        run: audit.Run | None = None,
    ) -> bool:
        staged, held = (self._staged if recorded else None), self._held
        run = run or self.group_commit.write
        landed = await audit.write_with_event(run, sql, values, staged, held)
        if landed:
            note_marked(self._database, key)
        return landed

    async def _run(self, sql: str, parameters: Sequence[Any]) -> aiosqlite.Cursor:
        try:
            return await self._db.execute(sql, parameters)
        except sqlite3.Error as exc:
            raise translate_sqlite_error(exc) from exc

    async def _rows(self, sql: str, parameters: Sequence[Any]) -> list[Any]:
        return await fetch_rows(self._db, sql, parameters)

    async def get(self, key: str) -> StoredObject | None:
        # Every read: the statement's text made once, no frame of ``_rows``.
        rows = await self._reads.fetch(GET, (key,))
        return stored_from(rows[0]) if rows else None

    async def put(self, write: Write) -> str:
        version = new_version()
        row = (write.key, write.data, *written_values(write, version))
        await self._write(
            write.key,
            f"INSERT OR REPLACE INTO memory_objects (key, data, {WRITTEN}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            write.change is not None,
            lambda event: (*row, event),
        )
        return version

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        version = new_version()
        key, data, values = write.key, write.data, written_values(write, version)
        if expected is None:
            landed = await self._write(
                key,
                INSERT_NEW,
                write.change is not None,
                lambda event: (key, data, *values, event),
            )
        else:
            landed = await self._write(
                key,
                UPDATE_AT,
                write.change is not None,
                lambda event: (data, *values, event, key, expected),
            )
        return version if landed else None

    async def edit_in_place(self, key: str, edit: Edit) -> tuple[Write, str | None]:
        # One trip to the thread: the read, the edit and the guarded write.
        job = EditJob(self.group_commit, key, edit, new_version())
        landed = await self._write(key, "", True, job.values, job.submit)
        assert job.write is not None  # the job raised otherwise
        return job.write, job.version if landed else None

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        if change is None:
            return await self._write(
                key,
                "DELETE FROM memory_objects WHERE key = ? AND version = ?",
                False,
                lambda _: (key, expected),
            )
        # The history trigger records the tombstone and removes the row.
        stamp = format_timestamp(change.at)
        head = (new_version(), stamp, *change_values(change))
        return await self._write(
            key,
            "UPDATE memory_objects SET tombstone = 1, version = ?, "
            "last_updated = ?, operation = ?, actor = ?, changed_at = ?, "
            "audit_event = ? WHERE key = ? AND version = ?",
            True,
            lambda event: (*head, event, key, expected),
        )

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[VersionRecord]:
        return await history_page(self._db, key, after=after, limit=limit)

    async def get_version(self, key: str, version: str) -> VersionRecord | None:
        return await history_version(self._db, key, version)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        lower = max(prefix, start_after) if start_after is not None else prefix
        comparison = ">" if start_after is not None and start_after >= prefix else ">="
        rows = await self._rows(
            f"SELECT key, {COLUMNS} FROM memory_objects "
            f"WHERE key {comparison} ? AND key < ? ORDER BY key LIMIT ?",
            (lower, upper_bound(prefix), limit),
        )
        return [listed_from(row) for row in rows]

    async def count(self, prefix: str) -> int:
        rows = await self._rows(
            "SELECT count(*) FROM memory_objects WHERE key >= ? AND key < ?",
            (prefix, upper_bound(prefix)),
        )
        return int(rows[0][0])

    async def ping(self) -> None:
        await self._rows("SELECT 1", ())

    async def scrub(self, prefix: str) -> None:
        # secure_delete zeroes freed cells, but interior B-tree pages may keep a
        # deleted key as a divider and the WAL keeps old page images: VACUUM
        # rebuilds every page, and a TRUNCATE checkpoint empties the WAL.
        await self._run(
            "DELETE FROM memory_history WHERE key >= ? AND key < ?",
            (prefix, upper_bound(prefix)),
        )
        await self._run("VACUUM", ())
        rows = await self._rows("PRAGMA wal_checkpoint(TRUNCATE)", ())
        if rows and rows[0][0]:
            raise backend_unavailable_error("timeout")


@asynccontextmanager
async def open_sqlite_storage(
    path: str,
    *,
    synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
    retention: HistoryRetention | None = None,
    search_drain_every: float | None = DRAIN_SECONDS,
) -> AsyncGenerator[SqliteStorage]:
    """Open the database (creating it), configure WAL, and close it on exit.

    ``search_drain_every``: seconds between background drains of the files
    pending search indexing (None: searches alone index them).
    """
    async with open_sqlite_connection(
        path, schema=OBJECTS_TABLE, synchronous=synchronous
    ) as connection:
        await prepare_history(connection, retention or HistoryRetention())
        await prepare_search(connection)
        await prepare_markers(connection)
        with open_point_reads(path, connection) as reads:
            async with open_search_index(path, drain_every=search_drain_every) as s:
                yield SqliteStorage(connection, s, reads, database=database_id(path))
