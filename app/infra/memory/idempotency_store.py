"""Idempotency records kept in this process (for storage other than SQLite)."""

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tenchi.idempotency import (
    IdempotencyConflict,
    IdempotencyDecision,
    IdempotencyReplay,
    IdempotencyReservation,
)

from app.infra.request_guards import ReservationStore, in_progress
from app.infra.sqlite.guard_store import SWEEP_INTERVAL_SECONDS


@dataclass(slots=True)
class _Record:
    fingerprint: str
    token: str
    result: bytes | None
    until: float | None
    """When the record stops holding its key (None: never, once completed)."""


class MemoryIdempotencyStore(ReservationStore):
    """The IdempotencyStore port on a dict, for one process."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = asyncio.Lock()
        self._records: dict[tuple[str, str, str], _Record] = {}
        self._swept_at = clock()

    async def claim(
        self, candidate: IdempotencyReservation, lease_seconds: float
    ) -> IdempotencyDecision:
        identity = (candidate.namespace, candidate.scope, candidate.key)
        async with self._lock:
            now = self._clock()
            self._sweep(now)
            record = self._records.get(identity)
            if record is None or _expired(record, now):
                self._records[identity] = _Record(
                    candidate.fingerprint, candidate.token, None, now + lease_seconds
                )
                return candidate
            if record.fingerprint != candidate.fingerprint:
                return IdempotencyConflict()
            if record.result is not None:
                return IdempotencyReplay(result_json=record.result)
            return in_progress((record.until or now) - now)

    async def settle(self, reservation: IdempotencyReservation, result: bytes) -> bool:
        async with self._lock:
            record = self._active(reservation)
            if record is None:
                return False
            ttl = reservation.completed_ttl
            record.result = result
            record.until = None if ttl is None else self._clock() + ttl
            return True

    async def abandon(self, reservation: IdempotencyReservation) -> None:
        async with self._lock:
            if self._active(reservation) is not None:
                identity = (reservation.namespace, reservation.scope, reservation.key)
                del self._records[identity]

    async def erase_scope(self, prefix: str) -> int:
        return await self._erase(lambda held, _: held[1].startswith(prefix))

    async def erase_files(self, prefix: str, tags: Sequence[str]) -> int:
        return await self._erase(
            lambda held, record: (
                held[1].startswith(prefix)
                and any(tag in record.fingerprint for tag in tags)
            )
        )

    async def _erase(
        self, erased: Callable[[tuple[str, str, str], _Record], bool]
    ) -> int:
        async with self._lock:
            kept = {
                held: record
                for held, record in self._records.items()
                if not erased(held, record)
            }
            count = len(self._records) - len(kept)
            self._records = kept
            return count

    def _sweep(self, now: float) -> None:
        # Drop expired records at most once a minute, not on every claim.
        if now - self._swept_at < SWEEP_INTERVAL_SECONDS:
            return
        self._swept_at = now
        self._records = {
            held: record
            for held, record in self._records.items()
            if not _expired(record, now)
        }

    def _active(self, reservation: IdempotencyReservation) -> _Record | None:
        """The record ``reservation`` still holds, unexpired and unsettled."""
        identity = (reservation.namespace, reservation.scope, reservation.key)
        record = self._records.get(identity)
        if (
            record is None
            or record.token != reservation.token
            or record.fingerprint != reservation.fingerprint
            or record.result is not None
            or _expired(record, self._clock())
        ):
            return None
        return record


def _expired(record: _Record, now: float) -> bool:
    return record.until is not None and record.until <= now
