"""Where endpoints are kept and how a delivery is sent: the webhook ports."""

from collections.abc import Mapping
from typing import Protocol

from .domain import Endpoint, Stored


class WebhookStore(Protocol):
    """Endpoints with their delivery state, shared by every process on the
    storage. Each ``swap`` is a compare-and-set on the version a read
    returned, so two replicas never both take a lease or advance a cursor."""

    async def create(self, endpoint: Endpoint) -> None:
        """Add a new endpoint (its id is fresh)."""
        ...

    async def listing(self, prefix: str | None) -> list[Stored]:
        """The endpoints of one entity prefix (None: every entity), by id."""
        ...

    async def swap(self, endpoint: Endpoint, expected: str) -> str | None:
        """Replace the endpoint if it is still at ``expected``: its new
        version, else None (changed by another, or removed)."""
        ...

    async def remove(self, prefix: str, endpoint_id: str) -> bool:
        """Remove one endpoint of ``prefix``; False when there was none."""
        ...

    async def erase(self, prefix: str) -> None:
        """Remove every endpoint of the entity (a purge)."""
        ...


class WebhookSender(Protocol):
    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> str:
        """POST one delivery: "" when the receiver answered 2xx, else why not
        (status, timeout, refused destination)."""
        ...
