"""The change feed's event stream with two `wenchang serve` processes on one
SQLite file, one directory of files, then one GCS bucket (the emulator).

docs/changes.md: a stream opened on one process receives the writes made
through the other, in commit order; a client that disconnects and comes back
with ``Last-Event-ID`` gets every change after it exactly once; another
entity's writes never appear; a refused stream is the usual error envelope.
"""

import asyncio
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


@pytest.fixture(scope="module", params=["sqlite", "file", "gcs"])
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
    carol, _ = create_token(tokens, parse_grants(["user=carol:owner"]))
    with running_servers(2, directory, settings=settings) as running:
        yield running, {"alice": alice, "bob": bob, "carol": carol}


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
        params = {"scope": "user"}
        # Where alice's feed stands now: the module's other tests write to it too.
        start = await reader.get(
            "/v1/changes", params=params, headers=bearer(tokens["alice"])
        )
        await write(writer, "before", tokens["alice"])
        headers = bearer(tokens["alice"]) | STREAM
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
            "/v1/changes",
            params=params | {"after": start.json()["next_cursor"]},
            headers=bearer(tokens["alice"]),
        )
        listed = [c["name"] for c in json_page.json()["changes"]]
        assert listed == ["before", "a", "b", "c", "d", "e"]


WRITERS = 4
ROUNDS = 3
HANG_SECONDS = 120
"""A lost change would leave a stream waiting for ever: a generous bound, not a
timed assertion."""


async def append(
    client: httpx.AsyncClient, name: str, line: str, version: str, token: str
) -> str:
    """Append ``line``; on 412 retry from the version the conflict carries."""
    for _ in range(400):
        response = await client.post(
            f"{AREA}/{name}/lines",
            json={"line": line},
            headers=bearer(token) | {"If-Match": f'"{version}"'},
        )
        if response.status_code != 412:
            assert response.status_code == 200, response.text
            appended: str = response.json()["version"]
            return appended
        version = response.json()["details"]["version"]
    raise AssertionError(f"{line!r} not appended in 400 attempts")


async def landed_order(client: httpx.AsyncClient, name: str, token: str) -> list[str]:
    """The file's versions oldest first, as its history holds them."""
    found: list[str] = []
    params: dict[str, str] = {}
    while True:
        response = await client.get(
            f"{AREA}/{name}/versions", params=params, headers=bearer(token)
        )
        assert response.status_code == 200, response.text
        page = response.json()
        found += [entry["version"] for entry in page["entries"]]
        if not page.get("next_cursor"):
            return found[::-1]
        params = {"cursor": page["next_cursor"]}


@pytest.mark.openapi_drift  # Tenchi's contracts cannot declare an event stream
async def test_concurrent_writers_reach_a_reconnecting_stream_once_each_in_order(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    (one, two), tokens = servers
    carol = tokens["carol"]  # an entity of its own: no other test's writes
    limits = httpx.Limits(max_connections=WRITERS * 2)
    async with (
        httpx.AsyncClient(base_url=one.url, timeout=60, limits=limits) as first,
        httpx.AsyncClient(base_url=two.url, timeout=60, limits=limits) as second,
        httpx.AsyncClient(base_url=one.url, timeout=60) as reader,
    ):
        shared = await write(second, "shared", carol)

        async def writer(number: int) -> list[tuple[str, str]]:
            """(name, version) of each write, in the order this writer made them."""
            client = (first, second)[number % 2]
            own = f"w{number}"
            mine = await write(client, own, carol)
            made = [(own, mine)]
            for serial in range(ROUNDS):
                line = f"- [observed] writer {number} line {serial}."
                version = await append(client, "shared", line, shared, carol)
                made.append(("shared", version))
                if serial:
                    mine = await append(client, own, line, mine, carol)
                    made.append((own, mine))
            return made

        total = WRITERS * (2 * ROUNDS)
        headers = bearer(carol) | STREAM
        params = {"scope": "user"}
        async with reader.stream(
            "GET", "/v1/changes", params=params, headers=headers
        ) as stream:
            assert stream.status_code == 200
            writing = asyncio.gather(*(writer(n) for n in range(WRITERS)))
            async with asyncio.timeout(HANG_SECONDS):
                before = await take(stream, total // 2)
        resumed = headers | {"last-event-id": before[-1][0]}
        async with reader.stream(
            "GET", "/v1/changes", params=params, headers=resumed
        ) as stream:
            async with asyncio.timeout(HANG_SECONDS):
                after = await take(stream, total - len(before))
        made = await writing
        history = await landed_order(first, "shared", carol)

    seen = [(data["name"], data["version"]) for _, data in before + after]
    answered = [write_ for writes in made for write_ in writes]
    assert len(seen) == len(set(seen)) == total
    assert sorted(seen) == sorted(answered)
    assert [cursor for cursor, _ in before + after] == [
        d["cursor"] for _, d in before + after
    ]
    assert [v for name, v in seen if name == "shared"] == history[1:]
    for writes in made:
        own = writes[0][0]
        assert [v for name, v in seen if name == own] == [
            v for name, v in writes if name == own
        ]


@pytest.mark.openapi_drift  # Tenchi's contracts cannot declare an event stream
async def test_a_stream_opened_with_after_starts_right_after_that_cursor(
    servers: tuple[tuple[ServerProcess, ...], dict[str, str]],
) -> None:
    """docs/changes.md: `after` on the stream's URL resumes as Last-Event-ID does."""
    (one, two), tokens = servers
    bob = tokens["bob"]
    async with (
        httpx.AsyncClient(base_url=one.url, timeout=30) as reader,
        httpx.AsyncClient(base_url=two.url, timeout=30) as writer,
    ):
        await write(writer, "after-one", bob)
        second = await write(writer, "after-two", bob)
        page = await reader.get(
            "/v1/changes", params={"scope": "user"}, headers=bearer(bob)
        )
        [start] = [c for c in page.json()["changes"] if c["name"] == "after-one"]
        params = {"scope": "user", "after": start["cursor"]}
        async with reader.stream(
            "GET", "/v1/changes", params=params, headers=bearer(bob) | STREAM
        ) as stream:
            async with asyncio.timeout(HANG_SECONDS):
                [(cursor, data)] = await take(stream, 1)
    assert (data["name"], data["version"], cursor) == (
        "after-two",
        second,
        data["cursor"],
    )


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
