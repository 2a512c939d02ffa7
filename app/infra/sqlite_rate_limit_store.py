"""SQLite fixed-window rate limits: one upsert decides each cost, across processes.

Every process that opens the same database file shares the windows, so replicas
on one host share each caller's allowance. Each consume is a single statement,
which SQLite's file lock makes atomic without a transaction of our own.
"""

import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager

import aiosqlite

from .request_guards import Consumption, FixedWindowStore, WindowAnswer
from .sqlite_connection import fetch_rows, open_sqlite_connection

SWEEP_EVERY = 512

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_limit_windows (
    namespace TEXT NOT NULL,
    scope TEXT NOT NULL,
    limit_count INTEGER NOT NULL,
    window_seconds REAL NOT NULL,
    used INTEGER NOT NULL,
    resets_at REAL NOT NULL,
    admitted INTEGER NOT NULL,
    PRIMARY KEY (namespace, scope)
) WITHOUT ROWID
"""

# The right-hand sides of SET all read the row as it was before this statement,
# so `fresh` and `fits` judge the old window and `admitted` records the verdict.
_FRESH = (
    "(w.resets_at <= :now OR w.limit_count != :limit OR w.window_seconds != :window)"
)
_FITS = "w.used + :cost <= w.limit_count"
_CONSUME = f"""
INSERT INTO rate_limit_windows AS w
    (namespace, scope, limit_count, window_seconds, used, resets_at, admitted)
VALUES (:namespace, :scope, :limit, :window, :cost, :now + :window, 1)
ON CONFLICT (namespace, scope) DO UPDATE SET
    admitted = CASE WHEN {_FRESH} OR {_FITS} THEN 1 ELSE 0 END,
    used = CASE WHEN {_FRESH} THEN :cost
                WHEN {_FITS} THEN w.used + :cost
                ELSE w.used END,
    resets_at = CASE WHEN {_FRESH} THEN :now + :window ELSE w.resets_at END,
    limit_count = :limit,
    window_seconds = :window
RETURNING admitted, used, resets_at
"""


class SqliteRateLimitStore(FixedWindowStore):
    """The RateLimitStore port on one autocommit connection."""

    def __init__(
        self,
        connection: aiosqlite.Connection,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = connection
        self._clock = clock
        self._consumes = 0

    async def spend(self, consumption: Consumption) -> WindowAnswer:
        now = self._clock()
        self._consumes += 1
        if self._consumes % SWEEP_EVERY == 0:
            await fetch_rows(
                self._db,
                "DELETE FROM rate_limit_windows WHERE resets_at <= :now",
                {"now": now},
            )
        parameters = {
            "namespace": consumption.namespace,
            "scope": consumption.scope,
            "limit": consumption.limit,
            "window": float(consumption.window_seconds),
            "cost": consumption.cost,
            "now": now,
        }
        rows = await fetch_rows(self._db, _CONSUME, parameters)
        admitted, used, resets_at = rows[0]
        remaining = consumption.limit - int(used)
        return WindowAnswer(bool(admitted), remaining, float(resets_at) - now)


@asynccontextmanager
async def open_sqlite_rate_limit_store(
    path: str, *, clock: Callable[[], float] = time.time
) -> AsyncGenerator[SqliteRateLimitStore]:
    """A store on its own connection to ``path`` (usually the memory database).

    Windows are counters, not acknowledged writes: losing the last ones to a
    power cut is harmless, and syncing on every request (reads included) is not.
    """
    async with open_sqlite_connection(
        path, schema=_SCHEMA, synchronous="normal"
    ) as connection:
        yield SqliteRateLimitStore(connection, clock=clock)
