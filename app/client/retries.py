"""The retry policy of the typed client: what is worth another attempt."""

from tenchi.idempotency import IDEMPOTENCY_IN_PROGRESS
from tenchi.rate_limits import RATE_LIMITED
from tenchi.retries import RetryPolicy, retry_policy

from app.shared.errors import backend_unavailable


def transient_retry(
    *,
    max_attempts: int = 3,
    total_timeout_seconds: float = 30.0,
    max_delay_seconds: float = 5.0,
    base_delay_seconds: float = 0.2,
) -> RetryPolicy:
    """Retry every transient refusal, honouring Retry-After: 503
    BACKEND_UNAVAILABLE, 429 RATE_LIMITED, IDEMPOTENCY_IN_PROGRESS, and
    gateway 502/504 (REQUEST_TIMEOUT among them).

    Mutations are retried too: each call carries one Idempotency-Key, reused
    by its retries, so an attempt that landed but whose answer was lost is
    answered with its first result (kept by the server for 10 minutes) and is
    never applied twice.
    """
    return retry_policy(
        max_attempts=max_attempts,
        retry_on=(
            backend_unavailable.code,
            RATE_LIMITED.code,
            IDEMPOTENCY_IN_PROGRESS.code,
        ),
        retry_on_statuses=(502, 503, 504),
        base_delay_seconds=base_delay_seconds,
        max_delay_seconds=max_delay_seconds,
        total_timeout_seconds=total_timeout_seconds,
        allow_unsafe_methods=True,
    )
