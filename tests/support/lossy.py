"""Clients whose first mutation commits but whose answer is lost on the way."""

import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import httpx
from wenchang_client import AsyncMemoryClient, transient_retry

from app.shared.identity import Grant, Identity
from tests.support.transports import TokenRegistry


class DropsFirstMutationAnswer(httpx.AsyncBaseTransport):
    """A proxy that lets the first mutation reach the server and commit, then
    loses its answer (the connection breaks), as a network failure would."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.mutations: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method in ("PUT", "POST", "DELETE"):
            self.mutations.append(request)
            if len(self.mutations) == 1:
                await response.aread()  # the server has answered: it committed
                raise httpx.ReadError("connection reset", request=request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def dropping_clients(
    url: str, tokens: TokenRegistry, label: str
) -> AsyncGenerator[
    tuple[AsyncMemoryClient, AsyncMemoryClient, DropsFirstMutationAnswer]
]:
    """On a fresh entity: a client that retries transient failures and whose
    first mutation's answer is lost, and a plain client."""
    fresh = {"user": Grant(f"e-{uuid.uuid4().hex}", "owner")}
    token = tokens.issue(Identity(grants=fresh, label=label))
    proxy = DropsFirstMutationAnswer()
    policy = transient_retry(max_attempts=3, base_delay_seconds=0.0)
    async with (
        AsyncMemoryClient(url, token=token) as plain,
        AsyncMemoryClient(url, token=token, retry=policy, transport=proxy) as lossy,
    ):
        yield lossy, plain, proxy
