"""Tenchi's request-guard ports taken once, for backends that answer one request each.

Tenchi's ``IdempotencyStore`` and ``RateLimitStore`` take their arguments by
keyword; the SQLite and Redis stores implement only what their backend decides
(claim, settle, spend from a window), and the decisions are built here alike.
"""

import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from math import ceil

from tenchi.idempotency import (
    IdempotencyDecision,
    IdempotencyInProgress,
    IdempotencyReservation,
    IdempotencyStoreError,
)
from tenchi.rate_limits import RateLimitDecision, RateLimitExceeded, RateLimitPermit


def retry_after(seconds: float) -> int:
    """Whole seconds a caller waits for ``seconds`` to pass (at least one)."""
    return max(1, ceil(seconds))


def in_progress(remaining_seconds: float) -> IdempotencyInProgress:
    """Another reservation holds the key for ``remaining_seconds`` more."""
    return IdempotencyInProgress(retry_after(remaining_seconds))


class ReservationStore(ABC):
    """The IdempotencyStore port over a backend that claims and settles records."""

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
        candidate = IdempotencyReservation(
            namespace, scope, key, fingerprint, token, completed_ttl
        )
        return await self.claim(candidate, reservation_ttl)

    async def complete(
        self, reservation: IdempotencyReservation, *, result_json: bytes
    ) -> None:
        if not await self.settle(reservation, result_json):
            raise IdempotencyStoreError(
                f"{type(self).__name__}: reservation is no longer active"
            )

    @abstractmethod
    async def claim(
        self, candidate: IdempotencyReservation, lease_seconds: float
    ) -> IdempotencyDecision:
        """``candidate`` if its key was free or expired; else what holds the key."""

    @abstractmethod
    async def settle(self, reservation: IdempotencyReservation, result: bytes) -> bool:
        """Store ``result`` under an active ``reservation``; False if it is not."""

    @abstractmethod
    async def abandon(self, reservation: IdempotencyReservation) -> None:
        """Release ``reservation``'s key if it still holds it; safe to repeat."""


@dataclass(frozen=True, slots=True)
class Consumption:
    """One cost taken from the window of ``namespace`` and ``scope``."""

    namespace: str
    scope: str
    limit: int
    window_seconds: float
    cost: int


@dataclass(frozen=True, slots=True)
class WindowAnswer:
    """What a backend's window said: admitted or not, and what is left of it."""

    admitted: bool
    remaining: int
    reset_after_seconds: float


class FixedWindowStore(ABC):
    """The RateLimitStore port over a backend that keeps fixed windows."""

    async def consume(
        self,
        *,
        namespace: str,
        scope: str,
        limit: int,
        window_seconds: float,
        cost: int,
    ) -> RateLimitDecision:
        consumption = Consumption(namespace, scope, limit, window_seconds, cost)
        answer = await self.spend(consumption)
        if answer.admitted:
            return RateLimitPermit(limit, answer.remaining, answer.reset_after_seconds)
        return RateLimitExceeded(limit, retry_after(answer.reset_after_seconds))

    @abstractmethod
    async def spend(self, consumption: Consumption) -> WindowAnswer:
        """Take the cost if it fits the window (a new one when due), atomically."""
