"""Resource updates over `subscriptions/listen`, with two `wenchang serve`
processes on one SQLite file, then on one GCS bucket (the emulator; docs/mcp.md,
"Files as resources").

A client listening on process A for a file hears of a write made through
process B; another entity's write to the same scope, area and name never
reaches it; a file it did not subscribe to stays quiet; opening the stream is
audited as ``read_changes``; a URI in a scope the caller lacks is acknowledged.
Over stdio, a client of an older protocol version subscribes with
``resources/subscribe`` on its session.
"""

import os
from collections.abc import Generator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import ResourceUpdatedNotification

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.mcp_support import (
    SESSION_SECONDS,
    http_session,
    stdio_parameters,
    stdio_session,
)
from tests.support.server import ServerProcess, running_servers
from tests.support.storage_adapters import EMULATOR_ENV, storage_url

URI = "wenchang://user/notes/Caf%C3%A9%20Cr%C3%A8me"
NAME = "Café Crème"


@pytest.fixture(scope="module", params=["sqlite", "gcs"])
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Generator[tuple[tuple[ServerProcess, ...], dict[str, str]]]:
    directory = tmp_path_factory.mktemp("mcp-subscriptions")
    tokens = directory / "tokens.json"
    kind: str = request.param
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
    settings = {
        "WENCHANG_STORAGE": storage_url(kind, directory),
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_RATE_LIMIT": "0",
    }
    alice, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    bob, _ = create_token(tokens, parse_grants(["user=bob:owner"]))
    with running_servers(2, directory, settings=settings) as running:
        yield (
            running,
            {"alice": alice, "bob": bob, "storage": settings["WENCHANG_STORAGE"]},
        )


def stdio_settings(storage: str) -> dict[str, str]:
    """`wenchang mcp` as Alice on the servers' storage (and the emulator's)."""
    local = {"WENCHANG_STORAGE": storage, "WENCHANG_LOCAL_IDENTITY": "user=alice:owner"}
    if storage.startswith("gcs://"):
        local[EMULATOR_ENV] = os.environ[EMULATOR_ENV]
    return local


def put(url: str, token: str, name: str, content: str) -> None:
    """Create or replace the file ``user/notes/<name>`` through ``url``."""
    path = f"{url}/v1/files/user/notes/{name}"
    auth = {"Authorization": f"Bearer {token}"}
    current = httpx.get(path, headers=auth)
    condition = (
        {"If-Match": current.headers["etag"]}
        if current.status_code == 200
        else {"If-None-Match": "*"}
    )
    answer = httpx.put(
        path,
        json={"content": content, "description": "d", "aliases": []},
        headers=auth | condition,
    )
    assert answer.status_code in (200, 201), answer.text


async def test_a_write_through_another_process_reaches_the_subscriber(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (a, b), tokens = servers
    async with (
        http_session(a.url, tokens["alice"]) as client,
        client.listen(resource_subscriptions=[URI]) as subscription,
    ):
        capabilities = client.server_capabilities
        assert subscription.honored.resource_subscriptions == [URI]
        # bob's file of the same name, and alice's other file, come first:
        # neither may reach the stream, so the first event is alice's write.
        put(b.url, tokens["bob"], NAME, "- [stated] Bob's.\n")
        put(b.url, tokens["alice"], "other", "- [stated] Other.\n")
        put(b.url, tokens["alice"], NAME, "- [stated] Alice's.\n")
        event = await anext(subscription)
        read = await client.read_resource(URI)
    assert event == ResourceUpdated(uri=URI)
    if tokens["storage"].startswith("sqlite:"):  # GCS's audit log is stdout
        audit = httpx.get(
            f"{a.url}/v1/audit",
            params={"operation": "read_changes"},
            headers={"Authorization": f"Bearer {tokens['alice']}"},
        )
        opened = [(e["surface"], e["outcome"]) for e in audit.json()["events"]]
        assert opened == [("mcp", "ok")], audit.text
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is True
    [content] = read.contents
    assert getattr(content, "text", None) == "- [stated] Alice's.\n"


async def test_each_write_is_one_update_in_order(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (a, b), tokens = servers
    uris = [URI, "wenchang://user/notes/second"]
    async with (
        http_session(a.url, tokens["alice"]) as client,
        client.listen(resource_subscriptions=uris) as subscription,
    ):
        put(b.url, tokens["alice"], "second", "- [stated] One.\n")
        put(a.url, tokens["alice"], NAME, "- [stated] Two.\n")
        put(b.url, tokens["alice"], "second", "- [stated] Three.\n")
        put(b.url, tokens["alice"], NAME, "- [stated] Four.\n")
        events = [await anext(subscription) for _ in range(4)]
    # One update per write, in commit order: a duplicate would shift the last.
    assert events == [
        ResourceUpdated(uri=uri) for uri in [*reversed(uris), *reversed(uris)]
    ]


async def test_a_stdio_server_hears_of_a_write_through_http(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]], tmp_path: Path
) -> None:
    (_, b), tokens = servers
    local = stdio_settings(tokens["storage"])
    async with (
        stdio_session(tmp_path, local) as client,
        client.listen(resource_subscriptions=[URI]) as subscription,
    ):
        put(b.url, tokens["alice"], NAME, "- [stated] Through HTTP.\n")
        event = await anext(subscription)
        read = await client.read_resource(URI)
    assert event == ResourceUpdated(uri=URI)
    [content] = read.contents
    assert getattr(content, "text", None) == "- [stated] Through HTTP.\n"


async def test_a_scope_the_caller_lacks_is_acknowledged_and_followed_no_further(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (a, _), tokens = servers
    uris = ["wenchang://team/notes/plan", "not a wenchang uri", URI]
    async with (
        http_session(a.url, tokens["bob"]) as client,
        client.listen(resource_subscriptions=uris) as subscription,
    ):
        put(a.url, tokens["bob"], NAME, "- [stated] Bob again.\n")
        event = await anext(subscription)
    assert subscription.honored.resource_subscriptions == uris
    assert event == ResourceUpdated(uri=URI)


# resources/subscribe is what a client of a version before 2026-07-28 sends.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_stdio_session_subscribes_and_unsubscribes(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]], tmp_path: Path
) -> None:
    (_, b), tokens = servers
    local = stdio_settings(tokens["storage"])
    updates, updated = anyio.create_memory_object_stream[str](10)

    async def heard(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            await updates.send(message.params.uri)

    second = "wenchang://user/notes/second"
    with updates, updated, anyio.fail_after(SESSION_SECONDS):
        async with Client(
            stdio_parameters(tmp_path, local), mode="legacy", message_handler=heard
        ) as client:
            capabilities = client.server_capabilities
            await client.subscribe_resource(URI)  # pyright: ignore[reportDeprecated]
            await client.subscribe_resource(second)  # pyright: ignore[reportDeprecated]
            put(b.url, tokens["alice"], NAME, "- [stated] Subscribed.\n")
            first = await updated.receive()
            await client.unsubscribe_resource(URI)  # pyright: ignore[reportDeprecated]
            # After the unsubscribe, only the other file is heard of.
            put(b.url, tokens["alice"], NAME, "- [stated] Unsubscribed.\n")
            put(b.url, tokens["alice"], "second", "- [stated] Still here.\n")
            then = await updated.receive()
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is True
    assert (first, then) == (URI, second)
