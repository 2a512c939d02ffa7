"""One way to open a Wenchang SQLite connection and to translate its errors.

Every connection (memory files, rate-limit windows, idempotency records) uses
autocommit, WAL, ``secure_delete`` and the same busy timeout, so several
processes on one file wait for each other instead of failing. ``synchronous``
is ``FULL`` unless the operator trades it: in WAL mode ``FULL`` syncs the log on
every commit, so an acknowledged write survives power loss; ``NORMAL`` keeps it
across a process crash only.
"""

import asyncio
import sqlite3
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Literal

import aiosqlite

from app.shared.errors import backend_unavailable_error

BUSY_TIMEOUT_MS = 5000
SETUP_RETRY_SECONDS = 0.02
type Synchronous = Literal["full", "normal"]
DEFAULT_SYNCHRONOUS: Synchronous = "full"


def pragmas(synchronous: Synchronous) -> tuple[str, ...]:
    """The settings every Wenchang connection runs before its first statement."""
    return (
        f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
        "PRAGMA journal_mode = WAL",
        f"PRAGMA synchronous = {synchronous.upper()}",
        "PRAGMA secure_delete = ON",
    )


def is_locked(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused for another connection's lock."""
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def translate_sqlite_error(exc: sqlite3.Error) -> Exception:
    """A lock wait that ran out is a timeout; anything else is an outage."""
    return backend_unavailable_error("timeout" if is_locked(exc) else "unavailable")


async def fetch_rows(
    connection: aiosqlite.Connection,
    sql: str,
    parameters: Sequence[object] | Mapping[str, object],
) -> list[sqlite3.Row]:
    """Run one statement and fetch its rows, its errors translated."""
    # One trip to the connection's thread (execute, fetch and close there)
    # rather than three; each trip costs a thread wake-up and a GIL hand-off.
    try:
        return list(await connection.execute_fetchall(sql, parameters))
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


@asynccontextmanager
async def open_sqlite_connection(
    path: str, *, schema: str, synchronous: Synchronous = DEFAULT_SYNCHRONOUS
) -> AsyncGenerator[aiosqlite.Connection]:
    """A configured connection with ``schema`` applied; closed on exit."""
    try:
        connection = await aiosqlite.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc
    try:
        try:
            await _set_up(connection, schema, synchronous)
        except sqlite3.Error as exc:
            raise translate_sqlite_error(exc) from exc
        yield connection
    finally:
        await connection.close()


async def _set_up(
    connection: aiosqlite.Connection, schema: str, synchronous: Synchronous
) -> None:
    """Run the pragmas and ``schema``, again while the file stays locked.

    Turning a rollback-journal file into WAL takes an exclusive lock, and when
    two openers each hold a shared lock and ask for it, SQLite fails one at once
    ("database is locked") instead of waiting in the busy handler, which could
    deadlock. Both steps are idempotent, so the loser tries again within the
    busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            for pragma in pragmas(synchronous):
                await connection.execute(pragma)
            await connection.executescript(schema)
            return
        except sqlite3.OperationalError as exc:
            if not is_locked(exc) or time.monotonic() >= deadline:
                raise
        await asyncio.sleep(SETUP_RETRY_SECONDS)
