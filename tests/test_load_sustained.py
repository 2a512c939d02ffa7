"""Sustained mixed load at concurrency 32 against one live server.

Thirty-two workers share one ``wenchang serve`` (SQLite). Each owns two files
and mixes reads, index and list calls, appends, whole-file writes, replaces and
delete-then-create on them; every fourth worker also appends to one shared
file, where a 412 is the documented outcome of a race and is retried. Any 5xx,
transport error or unexpected status is an error; at the end every file must
hold exactly its last acknowledged state and the shared file every
acknowledged line once. The server's RSS is sampled after warm-up and at the
end, and its growth is reported and bounded.

``WENCHANG_LOAD_SECONDS`` sets the duration (default 20 in CI; the README's
full mode is 300).
"""

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.server import ServerProcess, running_server

SECONDS = float(os.environ.get("WENCHANG_LOAD_SECONDS", "20"))
CONCURRENCY = 32
RSS_GROWTH_LIMIT_BYTES = 96 * 1024 * 1024
SHARED = "/v1/files/team/load/shared"
GRANTS = {"user": Grant("load", "owner"), "team": Grant("t-load", "member")}


@dataclass
class Owned:
    path: str
    document: dict[str, Any] | None = None


@dataclass
class Load:
    client: httpx.AsyncClient
    deadline: float
    outcomes: Counter[str]
    errors: list[str]
    shared_lines: list[str]


def rss_bytes(server: ServerProcess) -> int:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


async def call(
    load: Load, method: str, path: str, expected: set[int], **kw: Any
) -> httpx.Response | None:
    try:
        response = await load.client.request(method, path, **kw)
    except httpx.TransportError as exc:
        load.errors.append(f"{method} {path}: {exc!r}")
        return None
    load.outcomes[f"{method} {response.status_code}"] += 1
    if response.status_code not in expected:
        load.errors.append(
            f"{method} {path}: {response.status_code} {response.text[:200]}"
        )
        return None
    return response


def guard(owned: Owned) -> dict[str, str]:
    if owned.document is None:
        return {"If-None-Match": "*"}
    return {"If-Match": f'"{owned.document["version"]}"'}


async def mutate(load: Load, owned: Owned, serial: str, rng: random.Random) -> None:
    """One write to a file only this worker touches: it must always succeed."""
    body = {
        "content": f"- [stated] {serial}\n",
        "description": serial,
        "aliases": [serial],
    }
    choice = rng.random()
    if owned.document is None or choice < 0.25:
        expected = {201} if owned.document is None else {200}
        response = await call(
            load, "PUT", owned.path, expected, json=body, headers=guard(owned)
        )
    elif choice < 0.6 or len(owned.document["content"]) > 3000:
        line = {"line": f"- [observed] {serial}", "aliases": [serial]}
        response = await call(
            load, "POST", f"{owned.path}/lines", {200}, json=line, headers=guard(owned)
        )
    elif choice < 0.85:
        old = owned.document["content"].splitlines()[-1]
        edit = {"old_string": old, "new_string": f"- [inferred] {serial}"}
        response = await call(
            load,
            "POST",
            f"{owned.path}/replace",
            {200, 409},
            json=edit,
            headers=guard(owned),
        )
        if response is not None and response.status_code == 409:
            return  # the last line also occurs earlier: a documented refusal
    else:
        deleted = await call(load, "DELETE", owned.path, {204}, headers=guard(owned))
        if deleted is not None:
            owned.document = None
        return
    if response is not None:
        owned.document = response.json()


async def append_shared(load: Load, serial: str) -> None:
    """Racing writers on one file: retry a 412 from the version it reports."""
    line = f"- [stated] shared {serial}"
    response = await call(load, "GET", SHARED, {200})
    while response is not None and time.monotonic() < load.deadline + 30:
        version = response.headers["ETag"]
        response = await call(
            load,
            "POST",
            f"{SHARED}/lines",
            {200, 412},
            json={"line": line},
            headers={"If-Match": version},
        )
        if response is not None and response.status_code == 200:
            load.shared_lines.append(line)
            return


async def worker(load: Load, number: int, files: list[Owned]) -> None:
    rng = random.Random(number)
    serial = 0
    while time.monotonic() < load.deadline:
        serial += 1
        owned = rng.choice(files)
        roll = rng.random()
        if roll < 0.3 and owned.document is not None:
            response = await call(load, "GET", owned.path, {200})
            if response is not None:
                assert response.json() == owned.document, (
                    "a read did not see the last write"
                )
        elif roll < 0.42:
            await call(load, "GET", "/v1/index", {200})
        elif roll < 0.5:
            await call(load, "GET", "/v1/files/user/load", {200})
        elif roll < 0.56 and number % 4 == 0:
            await append_shared(load, f"w{number}-{serial}")
        else:
            await mutate(load, owned, f"w{number}-{serial}", rng)


async def verify(load: Load, files: list[Owned]) -> int:
    """Acknowledged writes missing from the server (must be 0)."""
    lost = 0
    for owned in files:
        response = await load.client.get(owned.path)
        found = response.json() if response.status_code == 200 else None
        lost += found != owned.document
    shared = (await load.client.get(SHARED)).json()["content"]
    lost += sum(shared.count(line + "\n") != 1 for line in load.shared_lines)
    return lost


async def run_load(server: ServerProcess, auth: dict[str, str]) -> dict[str, Any]:
    limits = httpx.Limits(
        max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY
    )
    async with httpx.AsyncClient(
        base_url=server.url, headers=auth, timeout=60, limits=limits
    ) as client:
        created = await client.put(
            SHARED,
            json={"content": "", "description": "", "aliases": []},
            headers={"If-None-Match": "*"},
        )
        assert created.status_code == 201, created.text
        started = time.monotonic()
        load = Load(client, started + SECONDS, Counter(), [], [])
        files = [
            [Owned(f"/v1/files/user/load/w{n}-{k}") for k in range(2)]
            for n in range(CONCURRENCY)
        ]
        warm = asyncio.create_task(asyncio.sleep(min(5.0, SECONDS / 4)))
        tasks = [
            asyncio.create_task(worker(load, n, files[n])) for n in range(CONCURRENCY)
        ]
        await warm
        rss_warm = rss_bytes(server)
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - started
        rss_end = rss_bytes(server)
        lost = await verify(load, [owned for group in files for owned in group])
    requests = load.outcomes.total()
    return {
        "seconds": round(elapsed, 1),
        "requests": requests,
        "requests_per_second": round(requests / elapsed),
        "errors": load.errors,
        "lost": lost,
        "rss_warm_mib": round(rss_warm / 2**20, 1),
        "rss_end_mib": round(rss_end / 2**20, 1),
        "rss_growth_bytes": rss_end - rss_warm,
        "outcomes": dict(load.outcomes),
    }


@pytest.fixture
def server(tmp_path: Path) -> Generator[tuple[ServerProcess, dict[str, str]]]:
    secret, _ = create_token(tmp_path / "tokens.json", GRANTS, label="load")
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'wenchang.db'}",
        "WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json"),
        "WENCHANG_RATE_LIMIT": "0",
    }
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as live:
        yield live, {"Authorization": f"Bearer {secret}"}


def test_mixed_load_at_concurrency_32_loses_nothing(
    server: tuple[ServerProcess, dict[str, str]],
) -> None:
    """Zero errors, zero lost acknowledged writes, bounded RSS growth."""
    live, auth = server

    report = asyncio.run(run_load(live, auth))

    print(f"\nload: {report}")
    assert report["errors"] == []
    assert report["lost"] == 0
    assert report["rss_growth_bytes"] < RSS_GROWTH_LIMIT_BYTES
