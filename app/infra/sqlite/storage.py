"""SQLite storage: one table in WAL mode, every change one job of its own transaction.

A change of a file is one group-commit job (``sqlite_group_commit``) on the
write connection, which lives on a thread of its own: its statement and,
once that landed, its version record, search mark, change marker and audit
event (``sqlite_writes`` lists them in the order they run). An edit in place
(``edit_in_place``, ``sqlite_edits``) reads, edits and writes in that job.

Reads run on another connection (a read by key on the loop's thread,
``sqlite_point_reads``); processes share the file, each write one
compare-and-swap statement. Writes that arrive while another commits share
one transaction (``sqlite_group_commit``); ``synchronous=FULL`` keeps them.
"""

import sqlite3
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

import aiosqlite

from app.features.memory.domain import parse_timestamp
from app.features.memory.ports import (
    Change,
    ChangeLogPage,
    HistoryRetention,
    ListedObject,
    StoredObject,
    VersionRecord,
    Write,
)
from app.infra.change_markers import prepare_markers
from app.infra.sqlite.audit_events import Staged, shares_database
from app.infra.sqlite.change_log import (
    SCRUB,
    ChangeLog,
    change_page,
    prepare_change_log,
)
from app.infra.sqlite.connection import (
    DEFAULT_SYNCHRONOUS,
    Synchronous,
    fetch_rows,
    open_sqlite_connection,
    translate_sqlite_error,
)
from app.infra.sqlite.edits import GET, Edit, EditJob
from app.infra.sqlite.erasures import EraseJob
from app.infra.sqlite.group_commit import GroupCommit, open_group_commit
from app.infra.sqlite.history import (
    OBJECTS_TABLE,
    HistoryRecorder,
    history_page,
    history_version,
    prepare_history,
)
from app.infra.sqlite.point_reads import PointReads, open_point_reads
from app.infra.sqlite.renames import RenameJob
from app.infra.sqlite.rows import (
    COLUMNS,
    listed_from,
    new_version,
    stored_from,
    upper_bound,
    written_values,
)
from app.infra.sqlite.search import SqliteSearchIndex
from app.infra.sqlite.search_drain import DRAIN_SECONDS, open_search_index
from app.infra.sqlite.search_schema import prepare_search
from app.infra.sqlite.writes import (
    INSERT_NEW,
    REPLACE,
    UPDATE_AT,
    DeleteJob,
    Landing,
    StatementJob,
)
from app.shared.errors import backend_unavailable_error

type Job = StatementJob | DeleteJob | EditJob | RenameJob | EraseJob

EXPIRIES = (
    "SELECT expires_at FROM memory_objects INDEXED BY memory_objects_expiring "
    "WHERE key >= ? AND key < ? AND expires_at IS NOT NULL"
)
"""One prefix's range of the partial index of expiring files."""


class SqliteStorage:
    def __init__(
        self,
        connection: aiosqlite.Connection,
        group_commit: GroupCommit,
        search_index: SqliteSearchIndex,
        reads: PointReads,
        *,
        retention: HistoryRetention,
    ) -> None:
        self._db, self._reads = connection, reads
        self.group_commit = group_commit
        """Runs every write job (tests and the bench read its counter)."""
        self.search_index = search_index
        """Ranks the files of this database, indexing the pending ones first."""
        log = ChangeLog(timedelta(seconds=retention.changes_seconds))
        self._landing = Landing(HistoryRecorder(retention), log)
        self._staged: Staged | None = None

    async def share_audit_log(self, path: str, staged: Staged) -> bool:
        """Commit each mutation's audit event with its write if the log is ``path``.

        ``staged`` is told of each event a write staged (the log moves them).
        """
        if await shares_database(self._db, path):
            self._staged = staged
            history, log = self._landing.history, self._landing.log
            self._landing = Landing(history, log, stages_events=True)
        return self._staged is not None

    async def _write(self, job: Job) -> bool:
        """Run ``job`` in a batch; whether its change landed (and its event with it)."""
        landed = False
        try:
            landed = await self.group_commit.run(job) == 1
        finally:
            if job.claimed is not None:
                job.claimed.settle(landed=landed)
        if landed and job.claimed is not None and self._staged is not None:
            self._staged()
        return landed

    async def _rows(self, sql: str, parameters: Sequence[object]) -> list[sqlite3.Row]:
        return await fetch_rows(self._db, sql, parameters)

    async def get(self, key: str) -> StoredObject | None:
        # Every read: the statement's text made once, no frame of ``_rows``.
        rows = await self._reads.fetch(GET, (key,))
        return stored_from(rows[0]) if rows else None

    async def put(self, write: Write) -> str:
        version = write.version or new_version()
        meta, values = written_values(write, version)
        parameters = (write.key, write.data, *values)
        await self._write(
            StatementJob(self._landing, REPLACE, parameters, write, version, meta)
        )
        return version

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        version = write.version or new_version()
        meta, values = written_values(write, version)
        if expected is None:
            sql, parameters = INSERT_NEW, (write.key, write.data, *values)
        else:
            sql, parameters = UPDATE_AT, (write.data, *values, write.key, expected)
        job = StatementJob(self._landing, sql, parameters, write, version, meta)
        return version if await self._write(job) else None

    async def edit_in_place(self, key: str, edit: Edit) -> tuple[Write, str | None]:
        # One trip to the thread: the read, the edit and the guarded write.
        job = EditJob(self._landing, key, edit, new_version())
        landed = await self._write(job)
        assert job.write is not None  # the job raised otherwise
        return job.write, job.version if landed else None

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        return await self._write(DeleteJob(self._landing, key, expected, change))

    async def erase_if_version(self, key: str, expected: str) -> bool:
        if not await self._write(EraseJob(key, expected)):
            return False
        # The WAL still holds the pages as they were: copied back and emptied.
        checkpoint = await self.group_commit.call(_checkpoint)
        if checkpoint and checkpoint[0]:
            raise backend_unavailable_error("timeout")
        return True

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        version = new_version()
        keys, versions = (source, destination), (expected, replacing, version)
        job = RenameJob(self._landing, keys, versions, change)
        return version if await self._write(job) else None

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[VersionRecord]:
        return await history_page(self._db, key, after=after, limit=limit)

    async def own_change(self, key: str, call: str) -> VersionRecord | None:
        return None  # a write is answered after its COMMIT: no outcome is unknown

    async def get_version(self, key: str, version: str) -> VersionRecord | None:
        return await history_version(self._db, key, version)

    async def changes_after(
        self, prefix: str, after: int, *, now: datetime, limit: int
    ) -> ChangeLogPage:
        since = now - self._landing.log.retention
        return await change_page(self._db, prefix, after, since=since, limit=limit)

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

    async def expiry_moments(self, prefixes: Sequence[str]) -> Sequence[datetime]:
        # One statement on the loop's thread: a range of the index per prefix.
        sql = " UNION ALL ".join([EXPIRIES] * len(prefixes))
        bounds = [bound for p in prefixes for bound in (p, upper_bound(p))]
        rows = await self._reads.fetch(sql, bounds) if prefixes else []
        return [parse_timestamp(row[0]) for row in rows]

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
        # rebuilds every page, and a TRUNCATE checkpoint empties the WAL. On the
        # write connection, between batches: no write of ours runs meanwhile.
        bounds = (prefix, upper_bound(prefix))
        checkpoint = await self.group_commit.call(lambda db: _scrub(db, bounds))
        if checkpoint and checkpoint[0]:
            raise backend_unavailable_error("timeout")


def _scrub(
    db: sqlite3.Connection, bounds: tuple[str, str]
) -> tuple[int, int, int] | None:
    try:
        db.execute("DELETE FROM memory_history WHERE key >= ? AND key < ?", bounds)
        db.execute(SCRUB, bounds)
        db.execute("VACUUM")
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
    return _checkpoint(db)


def _checkpoint(db: sqlite3.Connection) -> tuple[int, int, int] | None:
    try:
        return db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


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
        await prepare_history(connection)
        await prepare_change_log(connection)
        await prepare_search(connection)
        await prepare_markers(connection)
        with open_point_reads(path, connection) as reads:
            async with (
                open_group_commit(path, synchronous) as group_commit,
                open_search_index(path, drain_every=search_drain_every) as search,
            ):
                yield SqliteStorage(
                    connection,
                    group_commit,
                    search,
                    reads,
                    retention=retention or HistoryRetention(),
                )
