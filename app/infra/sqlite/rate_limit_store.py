"""SQLite fixed-window rate limits: one upsert decides each cost, across processes.

Every process that opens the same database file shares the windows, so replicas
on one host share each caller's allowance. Each consume is a single statement,
which SQLite's file lock makes atomic without a transaction of our own.
"""

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from app.infra.request_guards import Consumption, FixedWindowStore, WindowAnswer
from app.infra.sqlite.guard_store import SqliteGuardStore, open_sqlite_guard_store

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


class SqliteRateLimitStore(SqliteGuardStore, FixedWindowStore):
    """The RateLimitStore port on one autocommit connection."""

    SCHEMA = """
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
    SWEEP = "DELETE FROM rate_limit_windows WHERE resets_at <= :now"

    async def spend(self, consumption: Consumption) -> WindowAnswer:
        now = self._clock()
        await self._sweep(now)
        parameters = {
            "namespace": consumption.namespace,
            "scope": consumption.scope,
            "limit": consumption.limit,
            "window": float(consumption.window_seconds),
            "cost": consumption.cost,
            "now": now,
        }
        rows = await self._rows(_CONSUME, parameters)
        admitted, used, resets_at = rows[0]
        remaining = consumption.limit - int(used)
        return WindowAnswer(bool(admitted), remaining, float(resets_at) - now)


def open_sqlite_rate_limit_store(
    path: str, *, clock: Callable[[], float] = time.time
) -> AbstractAsyncContextManager[SqliteRateLimitStore]:
    """A store on its own connection to ``path`` (usually the memory database).

    Windows are counters, not acknowledged writes: losing the last ones to a
    power cut is harmless, and syncing on every request (reads included) is not.
    """
    return open_sqlite_guard_store(
        SqliteRateLimitStore, path, clock=clock, synchronous="normal"
    )
