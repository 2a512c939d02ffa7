"""Redis fixed-window rate limits shared by every replica; one script per consume.

The script reads and updates a window atomically and takes the time from
``REDIS_NOW``, so replicas whose clocks disagree still share one window.
Windows expire on their own shortly after they reset.
"""

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import cast

from app.infra.redis.connection import REDIS_NOW, RedisScriptStore, open_redis_store
from app.infra.request_guards import Consumption, FixedWindowStore, WindowAnswer

KEY_PREFIX = "wenchang:rate:"
EXPIRY_SLACK_MS = 60_000

# KEYS[1] the window; ARGV now_ms ('' = Redis clock), limit, window_ms, cost, slack.
_CONSUME = (
    REDIS_NOW
    + """
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
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
)


class RedisRateLimitStore(RedisScriptStore, FixedWindowStore):
    """The RateLimitStore port over one Redis database."""

    async def spend(self, consumption: Consumption) -> WindowAnswer:
        window_ms = max(1, round(consumption.window_seconds * 1000))
        now = self._now()
        key = f"{KEY_PREFIX}{consumption.namespace}\n{consumption.scope}"
        limit, cost = consumption.limit, consumption.cost
        arguments = [now, limit, window_ms, cost, EXPIRY_SLACK_MS]
        reply = await self._run(_CONSUME, [key], arguments)
        admitted, remaining, reset_ms = (
            int(part) for part in cast(Sequence[int], reply)
        )
        return WindowAnswer(bool(admitted), remaining, reset_ms / 1000)


def open_redis_rate_limit_store(
    url: str, *, clock: Callable[[], float] | None = None
) -> AbstractAsyncContextManager[RedisRateLimitStore]:
    """A store on the Redis at ``url``."""
    return open_redis_store(RedisRateLimitStore, url, clock=clock)
