"""Redis idempotency records shared by every replica; each transition is one script.

A record is a hash fenced by its reservation token. Expiry is decided from the
stored deadlines (by ``REDIS_NOW``); Redis also drops each record on its own
shortly after it can no longer be replayed.
"""

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import cast

from tenchi.idempotency import (
    IdempotencyConflict,
    IdempotencyDecision,
    IdempotencyReplay,
    IdempotencyReservation,
)

from app.infra.redis.connection import REDIS_NOW, RedisScriptStore, open_redis_store
from app.infra.request_guards import ReservationStore, in_progress

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
# ARGV: key prefix, scope prefix, then the tags a fingerprint must hold one of
# (none: every record of the scope). A record's key is its prefix, namespace,
# scope and key joined by newlines (a namespace holds none), so the scope is
# what follows the first newline. Run by a purge or a sweep: one pass over the
# keys.
_ERASE = """
local cursor, erased = '0', 0
local scoped = ARGV[2]
local function named(key)
  if #ARGV < 3 then return true end
  local held = redis.call('HGET', key, 'fingerprint')
  if not held then return false end
  for i = 3, #ARGV do
    if string.find(held, ARGV[i], 1, true) then return true end
  end
  return false
end
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1] .. '*', 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do
    local cut = string.find(key, '\\n', 1, true)
    if cut and string.sub(key, cut + 1, cut + #scoped) == scoped and named(key) then
      redis.call('DEL', key)
      erased = erased + 1
    end
  end
until cursor == '0'
return erased
"""


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else str(max(1, round(seconds * 1000)))


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisIdempotencyStore(RedisScriptStore, ReservationStore):
    """The IdempotencyStore port over one Redis database (binary replies)."""

    def _key(self, reservation: IdempotencyReservation) -> str:
        held = (reservation.namespace, reservation.scope, reservation.key)
        return KEY_PREFIX + "\n".join(held)

    async def claim(
        self, candidate: IdempotencyReservation, lease_seconds: float
    ) -> IdempotencyDecision:
        fingerprint, token = candidate.fingerprint, candidate.token
        arguments = [self._now(), fingerprint, token, _ms(lease_seconds)]
        reply = await self._run(
            _RESERVE, [self._key(candidate)], [*arguments, str(EXPIRY_SLACK_MS)]
        )
        verdict, *rest = cast(list[object], reply)
        match _text(verdict):
            case "reserved":
                return candidate
            case "conflict":
                return IdempotencyConflict()
            case "replay":
                return IdempotencyReplay(result_json=bytes(cast(bytes, rest[0])))
            case _:
                return in_progress(float(_text(rest[0])) / 1000)

    async def settle(self, reservation: IdempotencyReservation, result: bytes) -> bool:
        arguments: list[str | bytes] = [
            self._now(),
            reservation.fingerprint,
            reservation.token,
            result,
            _ms(reservation.completed_ttl),
            str(EXPIRY_SLACK_MS),
        ]
        return bool(await self._run(_COMPLETE, [self._key(reservation)], arguments))

    async def abandon(self, reservation: IdempotencyReservation) -> None:
        key = self._key(reservation)
        await self._run(_ABANDON, [key], [reservation.fingerprint, reservation.token])

    async def erase_scope(self, prefix: str) -> int:
        return int(cast(int, await self._run(_ERASE, [], [KEY_PREFIX, prefix])))

    async def erase_files(self, prefix: str, tags: Sequence[str]) -> int:
        if not tags:
            return 0  # no tag names a file (an empty list would erase them all)
        arguments = [KEY_PREFIX, prefix, *tags]
        return int(cast(int, await self._run(_ERASE, [], arguments)))


def open_redis_idempotency_store(
    url: str, *, clock: Callable[[], float] | None = None
) -> AbstractAsyncContextManager[RedisIdempotencyStore]:
    """A store on the Redis at ``url`` (binary replies)."""
    return open_redis_store(RedisIdempotencyStore, url, clock=clock)
