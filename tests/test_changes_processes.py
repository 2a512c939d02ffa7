"""The change feed's event stream with two `wenchang serve` processes on one
SQLite file, then on one GCS bucket (the emulator).

docs/changes.md: a stream opened on one process receives the writes made
through the other, in commit order; a client that disconnects and comes back
with ``Last-Event-ID`` gets every change after it exactly once; another
entity's writes never appear; a refused stream is the usual error envelope.
"""

import json
from collections.abc import AsyncGenerator, Generator
from typing import Any

import httpx
import pytest
from wenchang_client import AsyncMemoryClient, InvalidArgumentError

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.support.server import ServerProcess, running_servers
from tests.support.storage_adapters import storage_url

STREAM = {"accept": "text/event-stream"}
AREA = "/v1/files/user/stream"


@pytest.fixture(scope="module", params=["sqlite", "gcs"])
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Generator[tuple[tuple[ServerProcess, ...], dict[str, str]]]:
    directory = tmp_path_factory.mktemp("changes")
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
        yield running, {"alice": alice, "bob": bob}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def events(response: httpx.Response) -> AsyncGenerator[tuple[str, Any]]:
    """(id, data) of each event of an open stream; comments are skipped."""
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in fields:
                yield fields.get("id", ""), json.loads(fields["data"])
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value


async def take(response: httpx.Response, count: int) -> list[tuple[str, Any]]:
    taken: list[tuple[str, Any]] = []
    async for event in events(response):
        taken.append(event)
        if len(taken) == count:
            break
    return taken


async def write(client: httpx.AsyncClient, name: str, token: str) -> str:
    response = await client.put(
        f"{AREA}/{name}",
        json={"content": f"- [stated] {name}.\n", "description": name, "aliases": []},
        headers=bearer(token) | {"If-None-Match": "*"},
    )
    assert response.status_code == 201, response.text
    version: str = response.json()["version"]
    return version


@pytest.mark.openapi_drift  # Tenchi's contracts cannot declare an event stream
async def test_a_stream_resumes_after_a_disconnect_without_loss_or_repeat(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (one, two), tokens = servers
    async with (
        httpx.AsyncClient(base_url=one.url, timeout=30) as reader,
        httpx.AsyncClient(base_url=two.url, timeout=30) as writer,
    ):
        await write(writer, "before", tokens["alice"])
        headers = bearer(tokens["alice"]) | STREAM
        params = {"scope": "user"}
        async with reader.stream(
            "GET", "/v1/changes", params=params, headers=headers
        ) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            first = await write(writer, "a", tokens["alice"])
            await write(writer, "theirs", tokens["bob"])
            second = await write(writer, "b", tokens["alice"])
            seen = await take(stream, 2)
        assert [(d["name"], d["version"]) for _, d in seen] == [
            ("a", first),
            ("b", second),
        ]
        assert [cursor for cursor, _ in seen] == [d["cursor"] for _, d in seen]
        missed = [await write(writer, name, tokens["alice"]) for name in "cde"]
        resumed_headers = headers | {"last-event-id": seen[0][0]}
        async with reader.stream(
            "GET", "/v1/changes", params=params, headers=resumed_headers
        ) as stream:
            again = await take(stream, 4)
        assert [d["version"] for _, d in again] == [second, *missed]
        json_page = await reader.get(
            "/v1/changes", params=params, headers=bearer(tokens["alice"])
        )
        listed = [c["name"] for c in json_page.json()["changes"]]
        assert listed == ["before", "a", "b", "c", "d", "e"]


@pytest.mark.openapi_drift  # the stream's own refusals, before any event
async def test_a_stream_with_a_foreign_cursor_is_refused_before_it_starts(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (one, _), tokens = servers
    async with httpx.AsyncClient(base_url=one.url, timeout=30) as client:
        mine = await client.get(
            "/v1/changes", params={"scope": "user"}, headers=bearer(tokens["alice"])
        )
        cursor = mine.json()["next_cursor"]
        headers = bearer(tokens["bob"]) | STREAM | {"last-event-id": cursor}
        refused = await client.get(
            "/v1/changes", params={"scope": "user"}, headers=headers
        )
        assert refused.status_code == 422
        assert refused.json()["details"]["argument"] == "cursor"
        anonymous = await client.get(
            "/v1/changes", params={"scope": "user"}, headers=STREAM
        )
        assert anonymous.status_code == 401


async def test_the_typed_client_reads_the_same_pages(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (one, two), tokens = servers
    async with (
        httpx.AsyncClient(base_url=two.url, timeout=30) as writer,
        AsyncMemoryClient(one.url, token=tokens["bob"]) as client,
    ):
        start = await client.read_changes("user")
        version = await write(writer, "bobs", tokens["bob"])
        page = await client.read_changes("user", after=start.next_cursor)
        assert [(c.name, c.version) for c in page.changes] == [("bobs", version)]
        with pytest.raises(InvalidArgumentError) as raised:
            await client.read_changes("user", after="not-a-cursor")
        assert raised.value.argument == "cursor"
