"""Idempotency and rate-limit stores: Tenchi's conformance suites on every adapter.

Each ``open_store`` opens a fresh client (a new SQLite connection, a new Redis
client) over shared data, the way separate replicas would, so the suites'
concurrency cases are cases across replicas.
"""

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from tenchi.rate_limits import RateLimitStore
from tenchi.testing import verify_idempotency_store, verify_rate_limit_store

from app.infra.memory.process_rate_limit_store import ProcessRateLimitStore
from app.infra.redis.idempotency_store import open_redis_idempotency_store
from app.infra.redis.rate_limit_store import open_redis_rate_limit_store
from app.infra.sqlite.idempotency_store import open_sqlite_idempotency_store
from app.infra.sqlite.rate_limit_store import open_sqlite_rate_limit_store
from tests.support.redis_server import RedisServer


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
