"""An endpoint as the webhook operations show it (never its secret, after creation)."""

from datetime import datetime

from app.features.memory.domain import format_timestamp

from ..schemas import Delivery, DeliveryStatus, Webhook
from . import Endpoint


def _moment(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def status_of(endpoint: Endpoint) -> DeliveryStatus:
    if endpoint.failed_at is not None:
        return "failed"
    return "retrying" if endpoint.attempts else "active"


def webhook_view(endpoint: Endpoint) -> Webhook:
    return Webhook(
        id=endpoint.id,
        url=endpoint.url,
        description=endpoint.description,
        created_at=format_timestamp(endpoint.created_at),
        delivery=Delivery(
            status=status_of(endpoint),
            attempts=endpoint.attempts,
            next_attempt_at=_moment(endpoint.next_attempt_at),
            last_error=endpoint.last_error,
            last_delivered_at=_moment(endpoint.last_delivered_at),
            failed_at=_moment(endpoint.failed_at),
            skipped_at=_moment(endpoint.skipped_at),
        ),
    )
