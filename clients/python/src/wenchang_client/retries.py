"""When a failed attempt is worth another: the retry policy and its budget.

A policy is opt-in (a client without one never retries). Every mutation carries
one Idempotency-Key that its retries reuse, so an attempt that landed but whose
answer was lost is answered with its first result and never applied twice.
"""

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wenchang_client.errors import BackendUnavailableError, WenchangError

__all__ = ["AttemptObserver", "AttemptOutcome", "RetryPolicy", "transient_retry"]

TRANSIENT_CODES = ("BACKEND_UNAVAILABLE", "RATE_LIMITED", "IDEMPOTENCY_IN_PROGRESS")
GATEWAY_STATUSES = (502, 503, 504)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retry an error whose code is in ``retry_on`` or whose status is in
    ``retry_on_statuses`` (and, when ``retry_transport_errors``, a connection
    that failed), waiting the server's ``Retry-After`` or an exponential
    delay, both capped at ``max_delay_seconds``; at most ``max_attempts``
    attempts within ``total_timeout_seconds``. Mutations only when
    ``allow_unsafe_methods``."""

    max_attempts: int = 3
    retry_on: Sequence[str] = TRANSIENT_CODES
    retry_on_statuses: Sequence[int] = GATEWAY_STATUSES
    base_delay_seconds: float = 0.2
    max_delay_seconds: float = 5.0
    total_timeout_seconds: float = 30.0
    allow_unsafe_methods: bool = False
    retry_transport_errors: bool = True


def transient_retry(
    *,
    max_attempts: int = 3,
    total_timeout_seconds: float = 30.0,
    max_delay_seconds: float = 5.0,
    base_delay_seconds: float = 0.2,
) -> RetryPolicy:
    """Retry every transient refusal, honouring Retry-After: 503
    BACKEND_UNAVAILABLE, 429 RATE_LIMITED, IDEMPOTENCY_IN_PROGRESS, gateway
    502/503/504 and lost connections; mutations too (keyed, so exactly once)."""
    return RetryPolicy(
        max_attempts=max_attempts,
        base_delay_seconds=base_delay_seconds,
        max_delay_seconds=max_delay_seconds,
        total_timeout_seconds=total_timeout_seconds,
        allow_unsafe_methods=True,
    )


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    """One attempt of a call, as an observer sees it (no payload)."""

    method: str
    path: str
    attempt: int
    max_attempts: int
    status_code: int | None
    error_code: str | None
    will_retry: bool
    retry_delay_seconds: float | None


type AttemptObserver = Callable[[AttemptOutcome], None]


class RetryBudget:
    """The attempts of one call: after each, retry (a delay) or stop (None)."""

    def __init__(
        self,
        policy: RetryPolicy | None,
        *,
        mutation: bool,
        observers: Sequence[AttemptObserver],
        method: str,
        path: str,
    ) -> None:
        usable = policy is not None and (policy.allow_unsafe_methods or not mutation)
        self._policy = policy if usable else None
        self._observers = observers
        self._where = (method, path)
        self._attempt = 0
        self._started = time.monotonic()

    def after(
        self,
        error: WenchangError | None,
        status_code: int | None,
        *,
        transport_failure: bool = False,
    ) -> float | None:
        """The delay before the next attempt, or None to stop; raises the
        timeout when the next attempt would start past the time budget."""
        self._attempt += 1
        delay = self._delay(error, status_code, transport_failure)
        policy = self._policy
        max_attempts = policy.max_attempts if policy else 1
        outcome = AttemptOutcome(
            *self._where,
            attempt=self._attempt,
            max_attempts=max_attempts,
            status_code=status_code,
            error_code=error.code if error else None,
            will_retry=delay is not None,
            retry_delay_seconds=delay,
        )
        for observe in self._observers:
            observe(outcome)
        if delay is not None and policy is not None:
            elapsed = time.monotonic() - self._started
            if elapsed + delay > policy.total_timeout_seconds:
                raise _budget_spent(error) from error
        return delay

    def _delay(
        self, error: WenchangError | None, status_code: int | None, transport: bool
    ) -> float | None:
        policy = self._policy
        if error is None or policy is None or self._attempt >= policy.max_attempts:
            return None
        wanted = (
            error.code in policy.retry_on
            or (status_code is not None and status_code in policy.retry_on_statuses)
            or (transport and policy.retry_transport_errors)
        )
        if not wanted:
            return None
        if error.retry_after_seconds is not None:
            return min(error.retry_after_seconds, policy.max_delay_seconds)
        backoff = policy.base_delay_seconds * 2 ** (self._attempt - 1)
        # Jitter spreads the retries of many clients refused at once.
        return min(policy.max_delay_seconds, backoff * random.uniform(0.5, 1.0))


def _budget_spent(error: WenchangError | None) -> BackendUnavailableError:
    message = f"Wenchang did not answer within the retry budget: {error}. Retry later."
    return BackendUnavailableError(
        message,
        {
            "error": "BackendUnavailableError",
            "category": "transient",
            "reason": "timeout",
        },
    )
