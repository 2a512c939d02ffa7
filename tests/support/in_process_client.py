"""A typed client calling an ASGI app in this process, its lifespan running."""

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

import httpx
from starlette.types import ASGIApp
from tenchi.testing import open_http
from wenchang_client import AsyncMemoryClient, RetryPolicy
from wenchang_client.retries import AttemptObserver


@asynccontextmanager
async def open_in_process_client(
    app: ASGIApp,
    *,
    token: str,
    retry: RetryPolicy | None = None,
    attempt_observers: Sequence[AttemptObserver] = (),
) -> AsyncGenerator[AsyncMemoryClient]:
    """``AsyncMemoryClient`` over ``httpx.ASGITransport`` to ``app``."""
    async with (
        open_http(app),  # runs the app's lifespan around the block
        AsyncMemoryClient(
            "http://testserver",
            token=token,
            retry=retry,
            transport=httpx.ASGITransport(app=app),
            attempt_observers=attempt_observers,
        ) as client,
    ):
        yield client
