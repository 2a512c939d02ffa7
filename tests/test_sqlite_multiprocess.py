"""Two `wenchang serve` processes on one SQLite file lose no write.

Every client here follows the recovery contract: on 412 it takes the current
content and version from the error's details and tries again with them.
"""

import asyncio
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.server import ServerProcess, alice_on_sqlite, running_servers

APPENDS = 20
WRITERS = 6
INCREMENTS_PER_WRITER = 4
MAX_ATTEMPTS = 200
COUNTER = re.compile(r"^count: (\d+)\n$")


@dataclass(frozen=True, slots=True)
class Pair:
    servers: tuple[ServerProcess, ServerProcess]
    token: str


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Generator[Pair]:
    """Two servers started together on a fresh database and one token file."""
    directory = tmp_path_factory.mktemp("shared")
    token, settings = alice_on_sqlite(directory, "shared.db")
    with running_servers(2, directory, settings=settings) as servers:
        yield Pair((servers[0], servers[1]), token)


@pytest.fixture
async def clients(pair: Pair) -> AsyncGenerator[tuple[httpx.AsyncClient, ...]]:
    headers = {"Authorization": f"Bearer {pair.token}"}
    async with (
        httpx.AsyncClient(
            base_url=f"{pair.servers[0].url}/v1/files/user", headers=headers
        ) as first,
        httpx.AsyncClient(
            base_url=f"{pair.servers[1].url}/v1/files/user", headers=headers
        ) as second,
    ):
        yield first, second


async def create(http: httpx.AsyncClient, path: str, content: str) -> dict[str, Any]:
    response = await http.put(
        path,
        json={"content": content, "description": "", "aliases": []},
        headers={"If-None-Match": "*"},
    )
    assert response.status_code == 201, response.text
    return response.json()


async def until_accepted(
    send: Callable[[dict[str, Any]], Awaitable[httpx.Response]], current: dict[str, Any]
) -> dict[str, Any]:
    """Send with the current state; on 412 retry from the conflict's details."""
    for _ in range(MAX_ATTEMPTS):
        response = await send(current)
        if response.status_code != 412:
            assert response.status_code == 200, response.text
            return response.json()
        current = response.json()["details"]
    raise AssertionError(f"no success in {MAX_ATTEMPTS} attempts")


async def append(
    http: httpx.AsyncClient, path: str, line: str, current: dict[str, Any]
) -> dict[str, Any]:
    async def send(state: dict[str, Any]) -> httpx.Response:
        return await http.post(
            f"{path}/lines",
            json={"line": line},
            headers={"If-Match": f'"{state["version"]}"'},
        )

    return await until_accepted(send, current)


async def increment(
    http: httpx.AsyncClient, path: str, current: dict[str, Any]
) -> dict[str, Any]:
    async def send(state: dict[str, Any]) -> httpx.Response:
        found = COUNTER.match(state["content"])
        assert found, state["content"]
        return await http.put(
            path,
            json={
                "content": f"count: {int(found.group(1)) + 1}\n",
                "description": "",
                "aliases": [],
            },
            headers={"If-Match": f'"{state["version"]}"'},
        )

    return await until_accepted(send, current)


async def test_concurrent_appends_through_two_servers_each_land_once(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    """20 appends split over both processes leave exactly those 20 lines."""
    created = await create(clients[0], "/log/appends", "")
    lines = [f"- [observed] Event {number}." for number in range(APPENDS)]

    await asyncio.gather(
        *(
            append(clients[number % 2], "/log/appends", line, created)
            for number, line in enumerate(lines)
        )
    )
    final = (await clients[1].get("/log/appends")).json()

    assert sorted(final["content"].splitlines()) == sorted(lines)


async def test_concurrent_replacements_through_two_servers_lose_no_update(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    """Read-increment-write with If-Match from both processes counts every write."""
    await create(clients[0], "/counters/shared", "count: 0\n")

    async def writer(http: httpx.AsyncClient) -> list[int]:
        written: list[int] = []
        for _ in range(INCREMENTS_PER_WRITER):
            current = (await http.get("/counters/shared")).json()
            stored = await increment(http, "/counters/shared", current)
            written.append(int(stored["content"].split()[1]))
        return written

    results = await asyncio.gather(
        *(writer(clients[number % 2]) for number in range(WRITERS))
    )
    final = (await clients[0].get("/counters/shared")).json()

    successes = WRITERS * INCREMENTS_PER_WRITER
    assert final["content"] == f"count: {successes}\n"
    assert sorted(value for values in results for value in values) == list(
        range(1, successes + 1)
    )
