"""The webhook settings (``WENCHANG_WEBHOOK_*``), a base of ``Settings``."""

from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from app.features.webhooks.policy import WebhookPolicy, trusting
from app.server.durations import parse_duration


def _seconds(value: object) -> object:
    return parse_duration(value) if isinstance(value, str) else value


class WebhookSettings(BaseSettings):
    webhook_retry_base: float = Field(default=5, gt=0, le=86_400)
    """The first retry's wait; each next one doubles (``5s``)."""
    webhook_retry_window: float = Field(default=86_400, gt=0, le=30 * 86_400)
    """How long failures last before an endpoint is failed (``24h``)."""
    webhook_trusted_hosts: Annotated[tuple[str, ...], NoDecode] = ()
    """Hosts deliveries may reach over plain http and on any address."""

    @field_validator("webhook_retry_base", "webhook_retry_window", mode="before")
    @classmethod
    def _webhook_duration(cls, value: object) -> object:
        return _seconds(value)

    @field_validator("webhook_trusted_hosts", mode="before")
    @classmethod
    def _webhook_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(p.strip().lower() for p in value.split(",") if p.strip())
        return value

    @property
    def webhook_policy(self) -> WebhookPolicy:
        return trusting(
            self.webhook_trusted_hosts,
            retry_base=self.webhook_retry_base,
            retry_window=self.webhook_retry_window,
        )
