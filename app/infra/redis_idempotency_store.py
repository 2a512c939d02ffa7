"""Redis idempotency records shared by every replica; each transition is one script.

A record is a hash fenced by its reservation token. Expiry is decided from the
stored deadlines (by ``REDIS_NOW``); Redis also drops each record on its own
shortly after it can no longer be replayed.
"""

import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from math import ceil
from typing import cast

from redis.asyncio import Redis
from tenchi.idempotency import (
    IdempotencyConflict,
    IdempotencyDecision,
    IdempotencyInProgress,
    IdempotencyReplay,
    IdempotencyReservation,
    IdempotencyStoreError,
)

from app.infra.redis_connection import REDIS_NOW, open_redis_client, run_script

KEY_PREFIX = "wenchang:idempotency:"
EXPIRY_SLACK_MS = 60_000
# ARGV: now_ms, fingerprint, token, reservation_ms, slack_ms
_RESERVE = (
    REDIS_NOW
    + """
local r = redis.call('HMGET', KEYS[1], 'fingerprint', 'state', 'result',
                     'reserved_until', 'completed_until')
local expired = (r[2] == 'reserved' and tonumber(r[4]) <= now) or
  (r[2] == 'completed' and r[5] ~= '' and tonumber(r[5]) <= now)
if not r[2] or expired then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[2], 'state', 'reserved',
             'token', ARGV[3], 'reserved_until', now + tonumber(ARGV[4]),
             'completed_until', '')
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[5]))
  return {'reserved'}
end
if r[1] ~= ARGV[2] then return {'conflict'} end
if r[2] == 'completed' then return {'replay', r[3]} end
return {'in_progress', tostring(tonumber(r[4]) - now)}
"""
)
# ARGV: now_ms, fingerprint, token, result, completed_ms ('' = keep), slack_ms
_COMPLETE = (
    REDIS_NOW
    + """
local r = redis.call('HMGET', KEYS[1], 'fingerprint', 'state', 'token',
                     'reserved_until')
if r[2] ~= 'reserved' or r[1] ~= ARGV[2] or r[3] ~= ARGV[3]
    or tonumber(r[4]) <= now then
  return 0
end
local ttl = tonumber(ARGV[5])
local untill = ''
if ttl then untill = now + ttl end
redis.call('HSET', KEYS[1], 'state', 'completed', 'result', ARGV[4],
           'completed_until', untill)
if ttl then
  redis.call('PEXPIRE', KEYS[1], ttl + tonumber(ARGV[6]))
else
  redis.call('PERSIST', KEYS[1])
end
return 1
"""
)
# ARGV: fingerprint, token
_ABANDON = """
local r = redis.call('HMGET', KEYS[1], 'fingerprint', 'state', 'token')
if r[2] == 'reserved' and r[1] == ARGV[1] and r[3] == ARGV[2] then
  redis.call('DEL', KEYS[1])
end
return 1
"""


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else str(max(1, round(seconds * 1000)))


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisIdempotencyStore:
    """The IdempotencyStore port over one Redis database (binary replies)."""

    def __init__(
        self,
        client: Redis,
        *,
        clock: Callable[[], float] | None = None,
        key_prefix: str = KEY_PREFIX,
    ) -> None:
        self._clock = clock
        self._key_prefix = key_prefix
        self._reserve = client.register_script(_RESERVE)
        self._complete = client.register_script(_COMPLETE)
        self._abandon = client.register_script(_ABANDON)

    def _key(self, namespace: str, scope: str, key: str) -> str:
        return f"{self._key_prefix}{namespace}\n{scope}\n{key}"

    def _now(self) -> str:
        return "" if self._clock is None else str(round(self._clock() * 1000))

    async def reserve(
        self,
        *,
        namespace: str,
        scope: str,
        key: str,
        fingerprint: str,
        completed_ttl: float | None,
        reservation_ttl: float,
    ) -> IdempotencyDecision:
        token = uuid.uuid4().hex
        arguments = [self._now(), fingerprint, token, _ms(reservation_ttl)]
        reply = await run_script(
            self._reserve,
            [self._key(namespace, scope, key)],
            [*arguments, str(EXPIRY_SLACK_MS)],
        )
        verdict, *rest = cast(list[object], reply)
        match _text(verdict):
            case "reserved":
                return IdempotencyReservation(
                    namespace, scope, key, fingerprint, token, completed_ttl
                )
            case "conflict":
                return IdempotencyConflict()
            case "replay":
                return IdempotencyReplay(result_json=bytes(cast(bytes, rest[0])))
            case _:
                remaining_ms = float(_text(rest[0]))
                return IdempotencyInProgress(max(1, ceil(remaining_ms / 1000)))

    async def complete(
        self, reservation: IdempotencyReservation, *, result_json: bytes
    ) -> None:
        arguments: list[str | bytes] = [
            self._now(),
            reservation.fingerprint,
            reservation.token,
            result_json,
            _ms(reservation.completed_ttl),
            str(EXPIRY_SLACK_MS),
        ]
        key = self._key(reservation.namespace, reservation.scope, reservation.key)
        if not await run_script(self._complete, [key], arguments):
            raise IdempotencyStoreError(
                "RedisIdempotencyStore: reservation is no longer active"
            )

    async def abandon(self, reservation: IdempotencyReservation) -> None:
        key = self._key(reservation.namespace, reservation.scope, reservation.key)
        await run_script(
            self._abandon, [key], [reservation.fingerprint, reservation.token]
        )


@asynccontextmanager
async def open_redis_idempotency_store(
    url: str, *, clock: Callable[[], float] | None = None
) -> AsyncGenerator[RedisIdempotencyStore]:
    """A store on the Redis at ``url`` (binary replies)."""
    async with open_redis_client(url) as client:
        yield RedisIdempotencyStore(client, clock=clock)
