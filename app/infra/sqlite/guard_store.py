"""What the SQLite request-guard stores share: a connection, a clock, sweeps."""

import sqlite3
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import ClassVar

import aiosqlite

from app.infra.sqlite.connection import Synchronous, fetch_rows, open_sqlite_connection

SWEEP_INTERVAL_SECONDS = 60.0


class SqliteGuardStore:
    """Rows of ``SCHEMA`` on one autocommit connection; ``SWEEP`` drops expired ones."""

    SCHEMA: ClassVar[str]
    SWEEP: ClassVar[str]
    """One statement deleting every row expired at ``:now``."""

    def __init__(
        self,
        connection: aiosqlite.Connection,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = connection
        self._clock = clock
        self._swept_at: float | None = None

    async def _rows(
        self, sql: str, parameters: Mapping[str, object]
    ) -> list[sqlite3.Row]:
        return await fetch_rows(self._db, sql, parameters)

    async def _sweep(self, now: float) -> None:
        # Drop expired rows soon (secure_delete overwrites them), not only when
        # their key is reused, and at most once a minute.
        if self._swept_at is None or now - self._swept_at >= SWEEP_INTERVAL_SECONDS:
            self._swept_at = now
            await self._rows(self.SWEEP, {"now": now})


@asynccontextmanager
async def open_sqlite_guard_store[S: SqliteGuardStore](
    make: type[S],
    path: str,
    *,
    clock: Callable[[], float],
    synchronous: Synchronous,
) -> AsyncGenerator[S]:
    """A ``make`` store on its own connection to ``path``, its schema applied."""
    async with open_sqlite_connection(
        path, schema=make.SCHEMA, synchronous=synchronous
    ) as connection:
        yield make(connection, clock=clock)
