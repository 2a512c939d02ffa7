"""Meeting the write lock another process holds on a SQLite file: a timeout.

Processes on one file take turns through SQLite's write lock, waiting up to the
busy timeout, then answer 503 with reason ``timeout`` (docs/deploying.md). An
opening that must change the file (a database made before files could expire
gains a column, one made before the change log gains its table) meets the same
lock and must say the same, not that the backend is unavailable; so must any
statement run through ``fetch_rows``.
"""

import sqlite3
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from pathlib import Path

import aiosqlite
import pytest
from tenchi.errors import AppError

from app.features.audit.ports import AuditSelection, Subject
from app.infra.change_markers import prepare_markers
from app.infra.sqlite.audit_events import STAGE, shares_database, staged_record
from app.infra.sqlite.audit_log import AUDIT_SCHEMA, SqliteAuditLog
from app.infra.sqlite.change_log import prepare_change_log
from app.infra.sqlite.connection import fetch_rows, open_sqlite_connection
from app.infra.sqlite.history import OBJECTS_TABLE, prepare_history
from app.shared.errors import backend_unavailable
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import sql

BEFORE_EXPIRY = OBJECTS_TABLE.replace(",\n    expires_at TEXT\n", "\n")


@contextmanager
def write_lock_held(database: Path) -> Generator[None]:
    """Another process's write transaction, open until the block ends."""
    other = sqlite3.connect(database, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


def reason_of(raised: pytest.ExceptionInfo[AppError]) -> object:
    assert raised.value.definition is backend_unavailable
    return raised.value.details["reason"]


def tables(database: Path) -> set[str]:
    return {row[0] for row in sql(database, "SELECT name FROM sqlite_schema")}


async def test_a_column_added_while_another_process_writes_times_out(
    tmp_path: Path,
) -> None:
    database = tmp_path / "wenchang.db"
    assert "expires_at" not in BEFORE_EXPIRY
    async with open_sqlite_connection(str(database), schema=BEFORE_EXPIRY) as opened:
        await opened.execute("PRAGMA busy_timeout = 0")  # the wait, run out at once
        with write_lock_held(database), pytest.raises(AppError) as raised:
            await prepare_history(opened)

        assert reason_of(raised) == "timeout"
        await prepare_history(opened)  # the lock gone, the same opening succeeds
    columns = sql(database, "SELECT name FROM pragma_table_info('memory_objects')")
    assert ("expires_at",) in columns


@pytest.mark.parametrize(
    ("prepare", "table"),
    [(prepare_change_log, "memory_changes"), (prepare_markers, "change_markers")],
    ids=["change log", "markers"],
)
async def test_a_table_added_while_another_process_writes_times_out(
    tmp_path: Path,
    prepare: Callable[[aiosqlite.Connection], Awaitable[None]],
    table: str,
) -> None:
    database = tmp_path / "wenchang.db"
    async with open_sqlite_connection(str(database), schema=OBJECTS_TABLE) as opened:
        await opened.execute("PRAGMA busy_timeout = 0")
        before = tables(database)
        with write_lock_held(database), pytest.raises(AppError) as raised:
            await prepare(opened)

        assert reason_of(raised) == "timeout"
        assert tables(database) == before
        await prepare(opened)
    assert table in tables(database) - before


async def test_a_statement_that_meets_the_write_lock_times_out(tmp_path: Path) -> None:
    database = tmp_path / "wenchang.db"
    schema = "CREATE TABLE IF NOT EXISTS counts (n INTEGER)"
    async with open_sqlite_connection(str(database), schema=schema) as opened:
        await opened.execute("PRAGMA busy_timeout = 0")
        insert = "INSERT INTO counts VALUES (1) RETURNING n"
        with write_lock_held(database), pytest.raises(AppError) as raised:
            await fetch_rows(opened, insert, ())

        assert reason_of(raised) == "timeout"
        assert await fetch_rows(opened, insert, ()) == [(1,)]


async def test_sharing_the_audit_log_while_another_process_writes_times_out(
    tmp_path: Path,
) -> None:
    """Making the staging table ready meets the same lock, and says so."""
    database = tmp_path / "wenchang.db"
    async with open_sqlite_connection(str(database), schema=OBJECTS_TABLE) as opened:
        await opened.execute("PRAGMA busy_timeout = 0")
        before = tables(database)
        with write_lock_held(database), pytest.raises(AppError) as raised:
            await shares_database(opened, str(database))

        assert reason_of(raised) == "timeout"
        assert tables(database) == before
        assert await shares_database(opened, str(database))
    assert "audit_staged" in tables(database)


async def test_moving_staged_events_while_another_process_writes_times_out(
    tmp_path: Path,
) -> None:
    """A query moves what writes staged first; held off by the lock, it says
    so, and the events move once the lock is gone."""
    database = tmp_path / "wenchang.db"
    event = staged_write("tea")
    async with open_sqlite_connection(str(database), schema=AUDIT_SCHEMA) as opened:
        await opened.execute("PRAGMA busy_timeout = 0")
        sql(database, STAGE, staged_record(event), "v1")
        log = SqliteAuditLog(opened, max_days=30)
        selection = AuditSelection(subjects=(Subject("user", "alice"),))
        with write_lock_held(database), pytest.raises(AppError) as raised:
            await log.query(selection, before=None, limit=10)

        assert reason_of(raised) == "timeout"
        page = await log.query(selection, before=None, limit=10)
        assert [e.id for e in page.events] == [event.id]
        await log.close()
