"""MCP approval across replicas: a question one replica seals, another accepts.

Two servers share one SQLite file and one token file (and so the cursor secret
the sealing key derives from). The client's requests alternate between them,
so the retry that carries the user's answer reaches the other replica.
"""

from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests import mcp_scenarios as scenarios
from tests.mcp_support import SESSION_SECONDS, ok, serve


class Alternating(httpx2.AsyncBaseTransport):
    """Sends each request to the next replica in turn (a round-robin balancer)."""

    def __init__(self, ports: list[int]) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.ports = ports
        self.sent: list[int] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self.ports[len(self.sent) % len(self.ports)]
        self.sent.append(port)
        request.url = request.url.copy_with(port=port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Approver:
    def __init__(self) -> None:
        self.questions = 0

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        self.questions += 1
        return ElicitResult(action="accept", content={"approve": True})


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[list[str], str]]:
    """Two replicas requiring approval for delete_file; and a token for both."""
    tokens = tmp_path / "tokens.json"
    token, _ = create_token(tokens, parse_grants(["user=alice:owner"]), label="r")
    settings = Settings(
        storage=f"sqlite:///{tmp_path / 'wenchang.db'}",
        tokens_file=str(tokens),
        require_approval=("delete_file",),
    )
    with serve(build_app(settings)) as first, serve(build_app(settings)) as second:
        yield [first, second], token


@asynccontextmanager
async def balanced_session(
    urls: list[str], token: str, approver: Approver, balancer: Alternating
) -> AsyncGenerator[Client]:
    headers = {"authorization": f"Bearer {token}"}
    with anyio.fail_after(SESSION_SECONDS):
        async with (
            httpx2.AsyncClient(headers=headers, transport=balancer) as http,
            Client(
                streamable_http_client(f"{urls[0]}/mcp", http_client=http),
                elicitation_callback=approver,
            ) as session,
        ):
            yield session


async def test_an_approval_asked_by_one_replica_is_accepted_by_another(
    replicas: tuple[list[str], str],
) -> None:
    urls, token = replicas
    ports = [int(url.rsplit(":", 1)[1]) for url in urls]
    balancer, approver = Alternating(ports), Approver()
    async with balanced_session(urls, token, approver, balancer) as session:
        created = await scenarios.create(session, "notes", "x")
        asked_at = len(balancer.sent)
        deleted = await scenarios.delete(session, "notes", "x", created["version"])

    assert ok(deleted) == {"ok": True}
    assert approver.questions == 1
    # The question and the answered retry went to different replicas.
    assert len(set(balancer.sent[asked_at:])) == 2
