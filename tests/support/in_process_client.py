"""A typed client calling an ASGI app in this process, its lifespan running."""

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

import httpx
from starlette.types import ASGIApp
from tenchi.client import ClientAttemptObserver
from tenchi.retries import RetryPolicy
from tenchi.testing import open_http

from app.client import MemoryClient, open_memory_client


@asynccontextmanager
async def open_in_process_client(
    app: ASGIApp,
    *,
    token: str,
    retry: RetryPolicy | None = None,
    attempt_observers: Sequence[ClientAttemptObserver] = (),
) -> AsyncGenerator[MemoryClient]:
    """``open_memory_client`` over ``httpx.ASGITransport`` to ``app``."""
    async with (
        open_http(app),  # runs the app's lifespan around the block
        open_memory_client(
            "http://testserver",
            token=token,
            retry=retry,
            transport=httpx.ASGITransport(app=app),
            attempt_observers=attempt_observers,
        ) as client,
    ):
        yield client
