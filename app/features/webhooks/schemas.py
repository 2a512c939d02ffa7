"""What the webhook operations take and answer: an endpoint, its delivery state."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from app.features.memory.schemas import Segment, Strict

WEBHOOK_SCOPE = "The scope whose changes (of the caller's own entity) to deliver."
WebhookUrl = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2048,
        description="Where deliveries are POSTed: an https URL on a public address.",
    ),
]
WebhookId = Annotated[str, Field(min_length=1, max_length=64)]
DeliveryStatus = Literal["active", "retrying", "failed"]


class WebhookScope(Strict):
    scope: Segment = Field(description=WEBHOOK_SCOPE)


class WebhookBody(Strict):
    url: WebhookUrl
    description: Annotated[str, Field(max_length=512)] = ""


class AddWebhook(WebhookScope, WebhookBody):
    pass


class WebhookPath(WebhookScope):
    id: WebhookId


class Delivery(BaseModel):
    """Where an endpoint's deliveries stand."""

    status: DeliveryStatus
    """``retrying`` after a failed attempt; ``failed`` once attempts failed for the
    whole retry window (nothing more is sent until it is enabled again)."""
    attempts: int
    """Failed attempts of the change now due (0 when none failed)."""
    next_attempt_at: str | None
    last_error: str
    last_delivered_at: str | None
    failed_at: str | None
    skipped_at: str | None
    """When changes due here were last found no longer kept (older than
    ``WENCHANG_CHANGES_RETENTION``, or erased by a purge) and skipped: the
    receiver never got them and should read the files again. Later deliveries
    keep it; only a later skip replaces it."""


class Webhook(BaseModel):
    id: str
    url: str
    description: str
    created_at: str
    delivery: Delivery


class WebhookCreated(BaseModel):
    id: str
    url: str
    description: str
    secret: str
    """``whsec_`` and the signing key in base64: shown once, here."""
    created_at: str


class Webhooks(BaseModel):
    webhooks: list[Webhook]
