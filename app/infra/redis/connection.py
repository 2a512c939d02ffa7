"""One way to open a Wenchang Redis client, run its scripts, translate its errors.

Every client has the same socket and connect timeouts, so a Redis that stops
answering turns into BACKEND_UNAVAILABLE within seconds; connecting is lazy, so
a Redis that is down at startup does not stop the server. Scripts that decide by
time read it from ``REDIS_NOW`` (Redis's own clock unless a test supplies one),
so replicas whose clocks disagree still agree.
"""

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from tenchi.errors import AppError

from app.shared.errors import backend_unavailable_error

SOCKET_TIMEOUT_SECONDS = 2.0

REDIS_NOW = """
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"""
"""Lua prelude: ``now`` in milliseconds, from ARGV[1] ('' = Redis's clock)."""


def script_now(clock: Callable[[], float] | None) -> str:
    """``REDIS_NOW``'s argument: ``clock()`` in milliseconds, or '' for Redis's own."""
    return "" if clock is None else str(round(clock() * 1000))


def translate_redis_error(exc: RedisError) -> AppError:
    reason = "timeout" if isinstance(exc, RedisTimeoutError) else "unavailable"
    return backend_unavailable_error(reason)


async def run_script(
    script: AsyncScript, keys: Sequence[str], args: Sequence[str | bytes | int]
) -> object:
    """Run one script; every Redis failure is translated here."""
    try:
        reply: object = await script(keys=list(keys), args=list(args))
        return reply
    except RedisError as exc:
        raise translate_redis_error(exc) from exc


@asynccontextmanager
async def open_redis_client(
    url: str, *, decode_responses: bool = False, retries: int = 0
) -> AsyncGenerator[Redis]:
    """A configured client of the Redis at ``url``; closed on exit.

    ``retries`` replaces redis-py's default retry policy with that many
    re-sends after a dropped connection, on a short backoff.
    """
    options: dict[str, Any] = {}
    if retries:
        options["retry"] = Retry(ExponentialBackoff(cap=0.5, base=0.05), retries)
    # redis-py leaves from_url's **kwargs untyped; every option here is typed.
    client = Redis.from_url(  # pyright: ignore[reportUnknownMemberType]
        url,
        decode_responses=decode_responses,
        socket_timeout=SOCKET_TIMEOUT_SECONDS,
        socket_connect_timeout=SOCKET_TIMEOUT_SECONDS,
        **options,
    )
    try:
        yield client
    finally:
        await client.aclose()


class RedisScriptStore:
    """A store whose every operation is one Lua script on one client.

    A script is registered on its first run; ``_now()`` is ``REDIS_NOW``'s
    argument from the store's ``clock`` (None: Redis's own clock).
    """

    def __init__(
        self, client: Redis, *, clock: Callable[[], float] | None = None
    ) -> None:
        self._client = client
        self._clock = clock
        self._scripts: dict[str, AsyncScript] = {}

    def _now(self) -> str:
        return script_now(self._clock)

    async def _run(
        self, source: str, keys: Sequence[str], args: Sequence[str | bytes | int]
    ) -> object:
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = self._client.register_script(source)
        return await run_script(script, keys, args)


@asynccontextmanager
async def open_redis_store[S: RedisScriptStore](
    make: type[S], url: str, *, clock: Callable[[], float] | None = None
) -> AsyncGenerator[S]:
    """A ``make`` store on a client of the Redis at ``url``; closed on exit."""
    async with open_redis_client(url) as client:
        yield make(client, clock=clock)
