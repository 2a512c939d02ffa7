"""Redis fixed-window rate limits shared by every replica; one script per consume.

The script reads and updates a window atomically and, unless a test supplies
a clock, takes the time from Redis itself, so replicas whose clocks disagree
still share one window. Windows expire on their own shortly after they reset.
"""

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from math import ceil
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from tenchi.rate_limits import RateLimitDecision, RateLimitExceeded, RateLimitPermit

from app.shared.errors import backend_unavailable_error

KEY_PREFIX = "wenchang:rate:"
SOCKET_TIMEOUT_SECONDS = 2.0
EXPIRY_SLACK_MS = 60_000

# KEYS[1] the window; ARGV limit, window_ms, cost, now_ms ('' = Redis clock).
_CONSUME = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local w = redis.call('HMGET', KEYS[1], 'limit', 'window', 'used', 'resets')
local resets = tonumber(w[4])
if not resets or resets <= now or tonumber(w[1]) ~= limit
    or tonumber(w[2]) ~= window then
  redis.call('HSET', KEYS[1], 'limit', limit, 'window', window, 'used', cost,
             'resets', now + window)
  redis.call('PEXPIRE', KEYS[1], window + tonumber(ARGV[5]))
  return {1, limit - cost, window}
end
local used = tonumber(w[3])
if used + cost > limit then
  return {0, 0, resets - now}
end
redis.call('HSET', KEYS[1], 'used', used + cost)
return {1, limit - used - cost, resets - now}
"""


def _translate(exc: RedisError) -> Exception:
    reason = "timeout" if isinstance(exc, RedisTimeoutError) else "unavailable"
    return backend_unavailable_error(reason)


class RedisRateLimitStore:
    """The RateLimitStore port over one Redis database."""

    def __init__(
        self,
        client: Redis,
        *,
        clock: Callable[[], float] | None = None,
        key_prefix: str = KEY_PREFIX,
    ) -> None:
        self._clock = clock
        self._key_prefix = key_prefix
        self._consume = client.register_script(_CONSUME)

    async def consume(
        self,
        *,
        namespace: str,
        scope: str,
        limit: int,
        window_seconds: float,
        cost: int,
    ) -> RateLimitDecision:
        window_ms = max(1, round(window_seconds * 1000))
        now = "" if self._clock is None else str(round(self._clock() * 1000))
        key = f"{self._key_prefix}{namespace}\n{scope}"
        arguments = [limit, window_ms, cost, now, EXPIRY_SLACK_MS]
        try:
            reply = await self._consume(keys=[key], args=arguments)
        except RedisError as exc:
            raise _translate(exc) from exc
        admitted, remaining, reset_ms = (
            int(part) for part in cast(Sequence[int], reply)
        )
        if admitted:
            return RateLimitPermit(limit, remaining, reset_ms / 1000)
        return RateLimitExceeded(limit, max(1, ceil(reset_ms / 1000)))


@asynccontextmanager
async def open_redis_rate_limit_store(
    url: str, *, clock: Callable[[], float] | None = None
) -> AsyncGenerator[RedisRateLimitStore]:
    """A store on the Redis at ``url``; connecting is lazy, like the index cache."""
    # redis-py leaves from_url's **kwargs untyped; every option here is typed.
    client = Redis.from_url(  # pyright: ignore[reportUnknownMemberType]
        url,
        socket_timeout=SOCKET_TIMEOUT_SECONDS,
        socket_connect_timeout=SOCKET_TIMEOUT_SECONDS,
    )
    try:
        yield RedisRateLimitStore(client, clock=clock)
    finally:
        await client.aclose()
