"""Concurrent writes to a real `wenchang serve` on SQLite: acknowledged means stored.

Sixteen clients at once (the load under which SQLite commits several writes in
one transaction): each appends its own lines to one shared file, retrying on
412 from the conflict's details as the recovery contract says, and to a file
of its own. Every acknowledged line must be there exactly once, every answered
version distinct, and the version history must hold each of them. And when a
transaction cannot commit, every write it held is refused and none is stored.
"""

import asyncio
import sqlite3
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import alice_on_sqlite, running_server

CLIENTS = 16
LINES_EACH = 4
MAX_ATTEMPTS = 400


type Served = tuple[str, str, Path]
"""The server's URL, Alice's token and the database file."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Generator[Served]:
    directory = tmp_path_factory.mktemp("appends")
    token, settings = alice_on_sqlite(directory, WENCHANG_RATE_LIMIT="0")
    with running_server(
        directory, logs=directory / "logs", settings=settings
    ) as server:
        yield server.url, token, directory / "wenchang.db"


async def create(http: httpx.AsyncClient, path: str) -> dict[str, Any]:
    response = await http.put(
        path,
        json={"content": "", "description": "", "aliases": []},
        headers={"If-None-Match": "*"},
    )
    assert response.status_code == 201, response.text
    return response.json()


async def append(
    http: httpx.AsyncClient, path: str, line: str, state: dict[str, Any]
) -> dict[str, Any]:
    """Append ``line``; on 412 retry from the current state the conflict carries."""
    for _ in range(MAX_ATTEMPTS):
        response = await http.post(
            f"{path}/lines",
            json={"line": line},
            headers={"If-Match": f'"{state["version"]}"'},
        )
        if response.status_code != 412:
            assert response.status_code == 200, response.text
            return response.json()
        state = response.json()["details"]
    raise AssertionError(f"{line!r} not appended in {MAX_ATTEMPTS} attempts")


async def versions(http: httpx.AsyncClient, path: str) -> set[str]:
    found: set[str] = set()
    cursor: str | None = None
    while True:
        params = {"cursor": cursor} if cursor else {}
        response = await http.get(f"{path}/versions", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        found |= {entry["version"] for entry in page["entries"]}
        cursor = page.get("next_cursor")
        if not cursor:
            return found


async def test_sixteen_clients_appending_at_once_lose_no_line(
    served: Served,
) -> None:
    url, token, _ = served
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=CLIENTS * 2)
    async with httpx.AsyncClient(
        base_url=f"{url}/v1/files/user", headers=headers, limits=limits, timeout=60
    ) as http:
        shared = await create(http, "/log/shared")
        own = await asyncio.gather(
            *(create(http, f"/log/c{n}") for n in range(CLIENTS))
        )

        async def client(number: int) -> list[str]:
            answered: list[str] = []
            mine = own[number]
            for serial in range(LINES_EACH):
                line = f"- [observed] client {number} line {serial}."
                answered.append(
                    (await append(http, "/log/shared", line, shared))["version"]
                )
                mine = await append(http, f"/log/c{number}", line, mine)
                answered.append(mine["version"])
            return answered

        answered = await asyncio.gather(*(client(n) for n in range(CLIENTS)))
        final = (await http.get("/log/shared")).json()
        each = [(await http.get(f"/log/c{n}")).json() for n in range(CLIENTS)]
        shared_history = await versions(http, "/log/shared")

    expected = [
        f"- [observed] client {n} line {s}."
        for n in range(CLIENTS)
        for s in range(LINES_EACH)
    ]
    assert sorted(final["content"].splitlines()) == sorted(expected)
    for number, document in enumerate(each):
        assert document["content"].splitlines() == [
            f"- [observed] client {number} line {s}." for s in range(LINES_EACH)
        ]
    every = [version for versions_ in answered for version in versions_]
    assert len(set(every)) == len(every) == 2 * CLIENTS * LINES_EACH
    shared_answers = {v for versions_ in answered for v in versions_[0::2]}
    assert shared_answers <= shared_history


async def test_writes_refused_with_a_failed_transaction_are_not_stored(
    served: Served,
) -> None:
    """A poisoned write ends its transaction: whoever shared it gets 503, not a file."""
    url, token, database = served
    poison = sqlite3.connect(database, isolation_level=None)
    try:
        poison.execute(
            "CREATE TRIGGER poison AFTER INSERT ON memory_objects "
            "WHEN NEW.key LIKE 'user/alice/poison/%' "
            "BEGIN SELECT RAISE(ROLLBACK, 'poisoned'); END"
        )
    finally:
        poison.close()
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=CLIENTS * 2)
    async with httpx.AsyncClient(
        base_url=f"{url}/v1/files/user", headers=headers, limits=limits
    ) as http:

        async def put(path: str) -> int:
            response = await http.put(
                path,
                json={"content": f"{path}\n", "description": "", "aliases": []},
                headers={"If-None-Match": "*"},
            )
            return response.status_code

        paths = [
            f"/{'poison' if n % 4 == 0 else 'fine'}/r{round_}-{n}"
            for round_ in range(4)
            for n in range(CLIENTS)
        ]
        statuses = await asyncio.gather(*(put(path) for path in paths))
        found = [await http.get(path) for path in paths]

    for path, status, response in zip(paths, statuses, found, strict=True):
        if status == 201:
            assert response.status_code == 200, path
            assert response.json()["content"] == f"{path}\n"
        else:
            assert status == 503, (path, status)
            assert response.status_code == 404, path
    poisoned = [s for p, s in zip(paths, statuses, strict=True) if "poison" in p]
    assert poisoned == [503] * len(poisoned)
