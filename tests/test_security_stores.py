"""Idempotency and rate-limit stores: Tenchi's conformance suites on every adapter.

Each ``open_store`` opens a fresh client (a new SQLite connection, a new Redis
client) over shared data, the way separate replicas would, so the suites'
concurrency cases are cases across replicas.
"""

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import aiosqlite
import pytest
from tenchi.idempotency import IdempotencyInProgress, IdempotencyReservation
from tenchi.rate_limits import RateLimitStore
from tenchi.testing import verify_idempotency_store, verify_rate_limit_store

from app.infra.memory.process_rate_limit_store import ProcessRateLimitStore
from app.infra.redis.idempotency_store import open_redis_idempotency_store
from app.infra.redis.rate_limit_store import open_redis_rate_limit_store
from app.infra.sqlite import guard_store
from app.infra.sqlite.connection import Synchronous
from app.infra.sqlite.idempotency_store import (
    SqliteIdempotencyStore,
    open_sqlite_idempotency_store,
)
from app.infra.sqlite.rate_limit_store import (
    SqliteRateLimitStore,
    open_sqlite_rate_limit_store,
)
from tests.support.redis_server import RedisServer
from tests.support.sqlite_file import sql


class Clock:
    """A deterministic clock the conformance suites advance."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def test_sqlite_idempotency_store_conforms(tmp_path: Path) -> None:
    """Reservations, replays, conflicts and expiry hold across connections."""
    clock = Clock()
    path = str(tmp_path / "guards.db")

    await verify_idempotency_store(
        lambda: open_sqlite_idempotency_store(path, clock=clock),
        advance=clock.advance,
    )


async def test_process_rate_limit_store_conforms() -> None:
    """The default in-process windows pass Tenchi's rate-limit store suite."""
    clock = Clock()

    @asynccontextmanager
    async def shared() -> AsyncGenerator[ProcessRateLimitStore]:
        yield store

    store = ProcessRateLimitStore(clock=clock)
    await verify_rate_limit_store(shared, advance=clock.advance)


def test_process_windows_forget_ended_windows() -> None:
    """Windows that ended are swept, so idle callers do not accumulate."""
    clock = Clock()
    store = ProcessRateLimitStore(clock=clock)
    for caller in range(100):
        store.take("ns", f"caller-{caller}", 5, 60, 1)
    clock.advance(61)
    spent = [store.take("ns", "caller-0", 5, 60, 1) for _ in range(6)]

    assert spent[:5] == [None] * 5
    assert spent[5] == 60
    assert len(store._windows) == 1  # pyright: ignore[reportPrivateUsage]


async def test_sqlite_rate_limit_store_conforms(tmp_path: Path) -> None:
    """Fixed windows admit exactly the limit, also to concurrent connections."""
    clock = Clock()
    path = str(tmp_path / "guards.db")

    await verify_rate_limit_store(
        lambda: open_sqlite_rate_limit_store(path, clock=clock),
        advance=clock.advance,
    )


async def test_sqlite_windows_forget_ended_windows(tmp_path: Path) -> None:
    """Windows that ended are swept from the file given, so idle callers do not
    accumulate: by whichever caller comes next, at most once a minute."""
    clock = Clock()
    path = tmp_path / "guards.db"
    rows = "SELECT count(*) FROM rate_limit_windows"

    async def spend(store: SqliteRateLimitStore, caller: int) -> None:
        await store.consume(
            namespace="ns", scope=f"caller-{caller}", limit=5, window_seconds=10, cost=1
        )

    async with open_sqlite_rate_limit_store(str(path), clock=clock) as store:
        for caller in range(20):
            await spend(store, caller)  # the first swept, at 1000
        clock.advance(30)
        await spend(store, 0)
        within_the_minute = sql(path, rows)
        clock.advance(30)
        await spend(store, 0)

        assert within_the_minute == [(20,)]
        assert sql(path, "SELECT scope FROM rate_limit_windows") == [("caller-0",)]


async def test_sqlite_reservations_that_expired_are_swept(tmp_path: Path) -> None:
    """An expired reservation leaves the file given at the next claim a minute
    on, not only when its key is used again; a live one answers how long its
    lease has left."""
    clock = Clock()
    path = tmp_path / "guards.db"

    async def reserve(store: SqliteIdempotencyStore, key: str) -> object:
        return await store.reserve(
            namespace="memory",
            scope="caller",
            key=key,
            fingerprint="f",
            completed_ttl=600,
            reservation_ttl=60,
        )

    async with open_sqlite_idempotency_store(str(path), clock=clock) as store:
        assert isinstance(await reserve(store, "first"), IdempotencyReservation)
        clock.advance(20)
        busy = await reserve(store, "first")
        clock.advance(45)
        assert isinstance(await reserve(store, "second"), IdempotencyReservation)

        assert busy == IdempotencyInProgress(retry_after_seconds=40)
        keys = sql(path, "SELECT key FROM idempotency_records")
        assert keys == [("second",)]


class RacedKey(str):
    """A key each of whose bindings lets the test act between the store's
    statements: every claim finds it reserved by another caller, every look
    that follows finds it already released (as abandoned reservations are)."""

    database: Path
    binds: int

    def __conform__(self, protocol: object) -> str:
        self.binds += 1
        if self.binds % 2:  # the claim: another caller holds the key
            sql(
                self.database,
                "INSERT OR REPLACE INTO idempotency_records VALUES "
                "('memory', 'caller', ?, 'g', 'reserved', 't', NULL, 1e12, NULL)",
                str(self),
            )
        else:  # the look: released meanwhile
            sql(self.database, "DELETE FROM idempotency_records")
        return str(self)


async def test_sqlite_claims_that_lose_every_race_answer_retry_in_a_second(
    tmp_path: Path,
) -> None:
    """A key held at each claim and free at each look is claimed three times,
    then answered in progress, to be retried in a second."""
    path = tmp_path / "guards.db"
    key = RacedKey("raced")
    key.database, key.binds = path, 0
    async with open_sqlite_idempotency_store(str(path), clock=Clock()) as store:
        answer = await store.reserve(
            namespace="memory",
            scope="caller",
            key=key,
            fingerprint="f",
            completed_ttl=600,
            reservation_ttl=60,
        )

    assert answer == IdempotencyInProgress(retry_after_seconds=1)
    assert key.binds == 6


async def test_sqlite_rate_limit_windows_are_written_at_synchronous_normal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows are counters: their connection syncs at NORMAL (the default is
    FULL), which only the connection itself can tell."""
    opened: list[aiosqlite.Connection] = []
    real = guard_store.open_sqlite_connection

    @asynccontextmanager
    async def recorded(
        path: str, *, schema: str, synchronous: Synchronous
    ) -> AsyncGenerator[aiosqlite.Connection]:
        async with real(path, schema=schema, synchronous=synchronous) as connection:
            opened.append(connection)
            yield connection

    monkeypatch.setattr(guard_store, "open_sqlite_connection", recorded)
    async with open_sqlite_rate_limit_store(str(tmp_path / "guards.db")):
        (connection,) = opened
        rows = await connection.execute_fetchall("PRAGMA synchronous")
    assert [tuple(row) for row in rows] == [(1,)]  # NORMAL


async def test_redis_idempotency_store_conforms(redis_server: RedisServer) -> None:
    """The Redis scripts pass the same state machine as SQLite."""
    clock = Clock()

    await verify_idempotency_store(
        lambda: open_redis_idempotency_store(redis_server.url, clock=clock),
        advance=clock.advance,
    )


async def test_redis_rate_limit_store_conforms(redis_server: RedisServer) -> None:
    """The Redis script admits exactly the limit across clients."""
    clock = Clock()

    await verify_rate_limit_store(
        lambda: open_redis_rate_limit_store(redis_server.url, clock=clock),
        advance=clock.advance,
    )


@pytest.mark.parametrize(
    "open_store",
    [
        pytest.param(open_redis_rate_limit_store, id="redis"),
    ],
)
async def test_redis_clock_opens_a_full_window(
    redis_server: RedisServer,
    open_store: Callable[[str], AbstractAsyncContextManager[RateLimitStore]],
) -> None:
    """Without a test clock the window is timed by Redis, never by a replica."""
    async with open_store(redis_server.url) as store:
        first = await store.consume(
            namespace="security.clock", scope="s", limit=2, window_seconds=60, cost=1
        )
        second = await store.consume(
            namespace="security.clock", scope="s", limit=2, window_seconds=60, cost=1
        )
        third = await store.consume(
            namespace="security.clock", scope="s", limit=2, window_seconds=60, cost=1
        )

    assert [type(first).__name__, type(second).__name__, type(third).__name__] == [
        "RateLimitPermit",
        "RateLimitPermit",
        "RateLimitExceeded",
    ]
