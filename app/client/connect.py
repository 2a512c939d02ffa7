"""Opening a typed client on a Wenchang URL: the API path, the bearer token,
the errors every call may meet, and the hook that keeps framework refusals."""

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

import httpx
from tenchi.client import Client, ClientAttemptObserver
from tenchi.idempotency import IDEMPOTENCY_IN_PROGRESS
from tenchi.rate_limits import RATE_LIMITED
from tenchi.retries import RetryPolicy

from app.client.memory_client import MemoryClient
from app.client.translate import keep_refusal
from app.shared.errors import backend_unavailable, invalid_argument, unauthorized

API_PREFIX = "/v1"
CLIENT_ERRORS = (
    unauthorized,
    RATE_LIMITED,
    backend_unavailable,
    invalid_argument,
    IDEMPOTENCY_IN_PROGRESS,
)
"""Errors any call may meet: the API group's, and the one ``transient_retry``
retries on that not every contract declares; pass them to a raw ``Client``."""

__all__ = ["CLIENT_ERRORS", "open_memory_client"]


@asynccontextmanager
async def open_memory_client(
    base_url: str,
    *,
    token: str,
    retry: RetryPolicy | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    attempt_observers: Sequence[ClientAttemptObserver] = (),
) -> AsyncGenerator[MemoryClient]:
    """A client of the Wenchang at ``base_url`` (e.g. ``http://127.0.0.1:8000``).

    ``transport`` replaces the network, e.g. ``httpx.ASGITransport(app=app)``
    to call an app in this process (its lifespan must be running).
    """
    async with (
        httpx.AsyncClient(
            base_url=base_url.rstrip("/") + API_PREFIX,
            headers={"Authorization": f"Bearer {token}"},
            transport=transport,
            event_hooks={"response": [keep_refusal]},
        ) as http,
        Client(
            http=http, errors=CLIENT_ERRORS, attempt_observers=attempt_observers
        ) as client,
    ):
        yield MemoryClient(client, retry=retry)
