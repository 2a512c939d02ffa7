"""An endpoint and its delivery state, as every store keeps it."""

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from app.features.memory.domain.keys import entity_prefix

LEASE = timedelta(seconds=30)
"""How long a replica owns an endpoint's deliveries without renewing: longer
than one attempt (``SEND_TIMEOUT``), so a live holder always renews first."""
SEND_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A registered URL and where its deliveries stand.

    ``cursor`` is the seq of the entity's change log delivered last; the change
    after it is the one due. ``lease_holder`` delivers it until ``lease_until``.
    ``skipped_at``: when changes due were last found no longer kept, and skipped;
    no later delivery clears it (the receiver missed them for good).
    """

    id: str
    scope: str
    entity_id: str
    url: str
    description: str
    secret: str
    created_at: datetime
    cursor: int = 0
    attempts: int = 0
    failing_since: datetime | None = None
    next_attempt_at: datetime | None = None
    failed_at: datetime | None = None
    last_error: str = ""
    last_delivered_at: datetime | None = None
    skipped_at: datetime | None = None
    lease_holder: str = ""
    lease_until: datetime | None = None

    @property
    def prefix(self) -> str:
        return entity_prefix(self.scope, self.entity_id)


@dataclass(frozen=True, slots=True)
class Stored:
    """An endpoint as a store holds it: ``version`` guards its next swap."""

    endpoint: Endpoint
    version: str


def is_due(endpoint: Endpoint, now: datetime, holder: str) -> bool:
    """Whether ``holder`` may take the endpoint's deliveries now."""
    if endpoint.failed_at is not None:
        return False
    if endpoint.next_attempt_at is not None and endpoint.next_attempt_at > now:
        return False
    free = endpoint.lease_until is None or endpoint.lease_until <= now
    return free or endpoint.lease_holder == holder


def leased(endpoint: Endpoint, holder: str, now: datetime) -> Endpoint:
    return replace(endpoint, lease_holder=holder, lease_until=now + LEASE)


def released(endpoint: Endpoint) -> Endpoint:
    return replace(endpoint, lease_holder="", lease_until=None)


def delivered(endpoint: Endpoint, seq: int, now: datetime) -> Endpoint:
    return replace(
        endpoint,
        cursor=seq,
        attempts=0,
        failing_since=None,
        next_attempt_at=None,
        last_error="",
        last_delivered_at=now,
        lease_until=now + LEASE,
    )


def attempt_failed(
    endpoint: Endpoint, error: str, now: datetime, *, base: float, window: float
) -> Endpoint:
    """After a failed attempt: the next one ``base * 2**(attempts-1)`` seconds
    later, or the failed state once failures have lasted ``window`` seconds."""
    attempts = endpoint.attempts + 1
    since = endpoint.failing_since or now
    delay = timedelta(seconds=base * 2 ** min(attempts - 1, 40))
    gave_up = (now - since).total_seconds() >= window
    return released(
        replace(
            endpoint,
            attempts=attempts,
            failing_since=since,
            next_attempt_at=None if gave_up else now + delay,
            failed_at=now if gave_up else None,
            last_error=error[:500],
        )
    )


def enabled(endpoint: Endpoint) -> Endpoint:
    """A failed endpoint resumes with the change it failed on, at once."""
    return replace(
        endpoint, attempts=0, failing_since=None, next_attempt_at=None, failed_at=None
    )
