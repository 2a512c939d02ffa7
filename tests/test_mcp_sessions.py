"""`/mcp/session`: resources/subscribe over streamable HTTP with a session
(docs/mcp.md, "Sessions").

Two `wenchang serve` processes on one SQLite file: a 2025-11-25 client holding
a session on process A subscribes to a file and hears of a write made through
process B, never of another entity's write to the same scope, area and name;
after it unsubscribes it hears only of its other file. A session belongs to
the credential that opened it, the endpoint refuses a request without one, and
sessions are bounded in number and idle time (in-process app under uvicorn).
"""

import logging
import time
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from anyio.abc import ObjectSendStream
from mcp.client import Client
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ResourceUpdatedNotification

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.mcp.session_subscriptions import logger as subscriptions_logger
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import SESSION_SECONDS, serve
from tests.support.server import ServerProcess, running_servers
from tests.support.storage_adapters import storage_url
from tests.test_mcp_subscriptions import NAME, URI, put

# resources/subscribe is what a client of a version before 2026-07-28 sends.
pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)

SECOND = "wenchang://user/notes/second"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SUBSCRIBE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "resources/subscribe",
    "params": {"uri": URI},
}
subscriptions_log = subscriptions_logger.name


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Generator[tuple[tuple[ServerProcess, ...], dict[str, str]]]:
    directory = tmp_path_factory.mktemp("mcp-sessions")
    tokens = directory / "tokens.json"
    settings = {
        "WENCHANG_STORAGE": storage_url("sqlite", directory),
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_RATE_LIMIT": "0",
    }
    alice, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    bob, _ = create_token(tokens, parse_grants(["user=bob:owner"]))
    with running_servers(2, directory, settings=settings) as running:
        yield running, {"alice": alice, "bob": bob}


@asynccontextmanager
async def session(
    url: str, token: str, updates: ObjectSendStream[str]
) -> AsyncGenerator[Client]:
    """A 2025-11-25 client session on ``url``'s /mcp/session; each
    ``notifications/resources/updated`` it hears goes to ``updates``."""

    async def heard(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            await updates.send(message.params.uri)

    headers = {"authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(
            streamable_http_client(f"{url}/mcp/session", http_client=http),
            mode="legacy",
            message_handler=heard,
        ) as client,
    ):
        yield client


async def test_a_session_subscribes_and_unsubscribes_across_processes(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (a, b), tokens = servers
    updates, updated = anyio.create_memory_object_stream[str](10)
    with updates, updated, anyio.fail_after(SESSION_SECONDS):
        async with session(a.url, tokens["alice"], updates) as client:
            capabilities = client.server_capabilities
            await client.subscribe_resource(URI)  # pyright: ignore[reportDeprecated]
            await client.subscribe_resource(SECOND)  # pyright: ignore[reportDeprecated]
            # bob's file of the same name comes first: it must not reach alice.
            put(b.url, tokens["bob"], NAME, "- [stated] Bob's.\n")
            put(b.url, tokens["alice"], NAME, "- [stated] Subscribed.\n")
            first = await updated.receive()
            await client.unsubscribe_resource(URI)  # pyright: ignore[reportDeprecated]
            put(b.url, tokens["alice"], NAME, "- [stated] Unsubscribed.\n")
            put(b.url, tokens["alice"], "second", "- [stated] Still here.\n")
            then = await updated.receive()
            read = await client.read_resource(URI)
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is True
    assert (first, then) == (URI, SECOND)
    [content] = read.contents
    assert getattr(content, "text", None) == "- [stated] Unsubscribed.\n"


def test_the_stateless_endpoint_does_not_offer_subscribe(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (a, _), tokens = servers
    auth = {"authorization": f"Bearer {tokens['alice']}"} | ACCEPT
    answer = httpx.post(f"{a.url}/mcp", json=INITIALIZE, headers=auth)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["capabilities"]["resources"]["subscribe"] is False
    assert "mcp-session-id" not in answer.headers


def test_a_session_belongs_to_the_credential_that_opened_it(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (a, _), tokens = servers
    url = f"{a.url}/mcp/session"
    alice = {"authorization": f"Bearer {tokens['alice']}"} | ACCEPT
    bob = {"authorization": f"Bearer {tokens['bob']}"} | ACCEPT
    opened = httpx.post(url, json=INITIALIZE, headers=alice)
    assert opened.status_code == 200, opened.text
    held = {"mcp-session-id": opened.headers["mcp-session-id"]}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    stolen = httpx.post(url, json=ping, headers=bob | held)
    unauthenticated = httpx.post(url, json=ping, headers=ACCEPT | held)
    owned = httpx.post(url, json=ping, headers=alice | held)
    closed = httpx.delete(url, headers=alice | held)
    after = httpx.post(url, json=ping, headers=alice | held)
    assert (stolen.status_code, unauthenticated.status_code) == (404, 401)
    assert (owned.status_code, closed.status_code, after.status_code) == (
        200,
        200,
        404,
    )


@pytest.fixture
def bounded(tmp_path: Path) -> Generator[tuple[str, str]]:
    """An app allowing one session, closed after one idle second."""
    tokens = tmp_path / "tokens.json"
    token, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    settings = Settings(
        storage="memory://",
        tokens_file=str(tokens),
        mcp_sessions=1,
        mcp_session_idle=1,
    )
    with serve(build_app(settings)) as url:
        yield f"{url}/mcp/session", token


def test_sessions_are_bounded_in_number_and_idle_time(
    bounded: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    url, token = bounded
    auth = {"authorization": f"Bearer {token}"} | ACCEPT
    first = httpx.post(url, json=INITIALIZE, headers=auth)
    refused = httpx.post(url, json=INITIALIZE, headers=auth)
    held = auth | {"mcp-session-id": first.headers["mcp-session-id"]}
    httpx.post(url, json=INITIALIZED, headers=held)
    with caplog.at_level(logging.INFO, logger=subscriptions_log):
        subscribed = httpx.post(url, json=SUBSCRIBE, headers=held)
        time.sleep(2.5)
    # Before any request names the session again: the idle sweep ended it.
    ended = [r.getMessage() for r in caplog.records if r.name == subscriptions_log]
    expired = httpx.post(url, json=SUBSCRIBE, headers=held)
    again = httpx.post(url, json=INITIALIZE, headers=auth)
    assert (first.status_code, refused.status_code) == (200, 503)
    assert subscribed.status_code == 200, subscribed.text
    # The idle session closed, and its followed scope with it.
    assert (expired.status_code, again.status_code) == (404, 200)
    assert ended == ["subscribe: session ended, 1 scope(s) unfollowed"]


async def test_a_session_of_an_in_process_server_hears_of_a_write(
    tmp_path: Path,
) -> None:
    """The app's own lifespan follows a subscribed scope (no second process)."""
    tokens = tmp_path / "tokens.json"
    token, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    settings = Settings(storage="memory://", tokens_file=str(tokens), rate_limit=0)
    updates, updated = anyio.create_memory_object_stream[str](10)
    with serve(build_app(settings)) as url, updates, updated:
        with anyio.fail_after(SESSION_SECONDS):
            async with session(url, token, updates) as client:
                await client.subscribe_resource(URI)  # pyright: ignore[reportDeprecated]
                put(url, token, NAME, "- [stated] Subscribed.\n")
                first = await updated.receive()
    assert first == URI


def test_a_server_that_stops_ends_each_session_s_subscriptions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = tmp_path / "tokens.json"
    token, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    settings = Settings(storage="memory://", tokens_file=str(tokens))
    auth = {"authorization": f"Bearer {token}"} | ACCEPT
    with caplog.at_level(logging.INFO, logger=subscriptions_log):
        with serve(build_app(settings)) as url:
            opened = httpx.post(f"{url}/mcp/session", json=INITIALIZE, headers=auth)
            held = auth | {"mcp-session-id": opened.headers["mcp-session-id"]}
            httpx.post(f"{url}/mcp/session", json=INITIALIZED, headers=held)
            subscribed = httpx.post(f"{url}/mcp/session", json=SUBSCRIBE, headers=held)
            assert subscribed.status_code == 200, subscribed.text
        ended = [r.getMessage() for r in caplog.records if r.name == subscriptions_log]

    assert ended == ["subscribe: session ended, 1 scope(s) unfollowed"]
