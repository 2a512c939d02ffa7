"""Crash safety: ``kill -9`` a live server amid acknowledged writes, then restart.

Six writers each own one file and stream version-guarded writes (whole-file
replaces, appends, deletes and re-creates) at a real ``wenchang serve``. After
a random number of acknowledgements the server gets SIGKILL. On restart every
file must hold its last acknowledged state, or the state of the one request
that was in flight when the server died; never anything else, and content and
metadata must come from the same write (no torn or half-updated file).

``WENCHANG_CRASH_CYCLES`` sets the kills per backend (default 2 in CI; the
README's full mode uses 20).
"""

import asyncio
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.server import ServerProcess, start_server

CYCLES = int(os.environ.get("WENCHANG_CRASH_CYCLES", "2"))
WRITERS = 6
ACKS_BEFORE_KILL = (20, 80)
MAX_CONTENT = 1500

type State = tuple[str, str, tuple[str, ...]] | None
"""(content, description, aliases) of a file, or None when it is absent."""

figures: Counter[str] = Counter()
FIGURES = (
    "acknowledged writes",
    "crashes",
    "in-flight writes that landed",
    "files checked",
    "acknowledged writes lost",
)
lost: list[str] = []
"""Every file found in neither its acknowledged nor an in-flight state."""


@dataclass
class Writer:
    """One file's acknowledged history and the write that may be in flight."""

    name: str
    acked: State = None
    version: str | None = None
    serial: int = 0
    in_flight: list[State] = field(default_factory=list[State])

    @property
    def path(self) -> str:
        return f"/v1/files/user/crash/{self.name}"

    def next_request(self) -> tuple[str, str, dict[str, Any] | None, State]:
        """Method, path suffix, JSON body and the state it leaves when it lands."""
        self.serial += 1
        serial = self.serial
        if self.acked is None:
            content = f"# {self.name}\n- [stated] serial {serial}\n"
            body: dict[str, Any] = {
                "content": content,
                "description": f"s{serial}",
                "aliases": [],
            }
            return "PUT", "", body, (content, f"s{serial}", ())
        content, _, aliases = self.acked
        if serial % 11 == 0:
            return "DELETE", "", None, None
        if serial % 3 == 0 or len(content) > MAX_CONTENT:
            fresh = f"# {self.name}\n- [stated] serial {serial}\n"
            body = {
                "content": fresh,
                "description": f"s{serial}",
                "aliases": [f"a{serial}"],
            }
            return "PUT", "", body, (fresh, f"s{serial}", (f"a{serial}",))
        line = f"- [stated] serial {serial}"
        body = {"line": line, "description": f"s{serial}", "aliases": [f"a{serial}"]}
        merged = aliases if f"a{serial}" in aliases else (*aliases, f"a{serial}")
        return "POST", "/lines", body, (f"{content}{line}\n", f"s{serial}", merged)

    def headers(self) -> dict[str, str]:
        if self.acked is None:
            return {"If-None-Match": "*"}
        return {"If-Match": f'"{self.version}"'}


def state_of(document: dict[str, Any]) -> State:
    return document["content"], document["description"], tuple(document["aliases"])


async def write_until_killed(
    client: httpx.AsyncClient, writer: Writer, acks: asyncio.Queue[None]
) -> None:
    while True:
        method, suffix, body, landed = writer.next_request()
        writer.in_flight = [landed]
        try:
            response = await client.request(
                method, writer.path + suffix, json=body, headers=writer.headers()
            )
        except httpx.TransportError:
            return
        assert response.status_code < 300, response.text
        writer.in_flight = []
        writer.acked = landed
        writer.version = response.json()["version"] if landed is not None else None
        if landed is not None:
            assert state_of(response.json()) == landed
        figures["acknowledged writes"] += 1
        acks.put_nowait(None)


async def kill_after(
    server: ServerProcess, acks: asyncio.Queue[None], count: int
) -> None:
    for _ in range(count):
        await acks.get()
    server.process.kill()  # SIGKILL: no shutdown handler runs
    figures["crashes"] += 1


async def crash_cycle(
    server: ServerProcess, auth: dict[str, str], writers: list[Writer]
) -> None:
    acks: asyncio.Queue[None] = asyncio.Queue()
    limits = httpx.Limits(max_connections=WRITERS)
    async with httpx.AsyncClient(
        base_url=server.url, headers=auth, timeout=30, limits=limits
    ) as client:
        await asyncio.gather(
            kill_after(server, acks, random.randint(*ACKS_BEFORE_KILL)),
            *(write_until_killed(client, writer, acks) for writer in writers),
        )


def recover(server: ServerProcess, auth: dict[str, str], writers: list[Writer]) -> None:
    """Every file is its acknowledged state or its in-flight state, whole."""
    listing = httpx.get(f"{server.url}/v1/files/user/crash", headers=auth)
    assert listing.status_code == 200, listing.text
    listed = {entry["name"]: entry for entry in listing.json()["entries"]}
    assert set(listed) <= {writer.name for writer in writers}
    for writer in writers:
        response = httpx.get(f"{server.url}{writer.path}", headers=auth)
        found: State = None
        if response.status_code == 200:
            document = response.json()
            found = state_of(document)
            assert listed[writer.name]["version"] == document["version"]
            assert listed[writer.name]["description"] == document["description"]
        else:
            assert response.status_code == 404, response.text
            assert writer.name not in listed
        allowed = [writer.acked, *writer.in_flight]
        figures["files checked"] += 1
        if found not in allowed:
            # Counted, not raised: the run's figure says how many were lost.
            figures["acknowledged writes lost"] += 1
            lost.append(f"{writer.name}: {found!r} is none of {allowed!r}")
        elif found != writer.acked:
            figures["in-flight writes that landed"] += 1
        writer.acked = found
        writer.version = response.json()["version"] if found is not None else None
        writer.in_flight = []


def storage_for(backend: str, root: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{root / 'wenchang.db'}"
    return f"file://{root / 'files'}"


@pytest.mark.parametrize("backend", ["sqlite", "file"])
def test_acknowledged_writes_survive_kill_9(backend: str, tmp_path: Path) -> None:
    """No acknowledged write is lost and no file is torn, over several crashes."""
    secret, _ = create_token(
        tmp_path / "tokens.json", {"user": Grant("crash", "owner")}
    )
    auth = {"Authorization": f"Bearer {secret}"}
    settings = {
        "WENCHANG_STORAGE": storage_for(backend, tmp_path),
        "WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json"),
        "WENCHANG_RATE_LIMIT": "0",
    }
    writers = [Writer(f"w{n}") for n in range(WRITERS)]
    before = figures.copy()

    for cycle in range(CYCLES + 1):
        server = start_server(tmp_path, logs=tmp_path / "logs", settings=settings)
        try:
            server.wait_until_healthy()
            if cycle:
                recover(server, auth, writers)
            if cycle < CYCLES:
                asyncio.run(crash_cycle(server, auth, writers))
        finally:
            server.stop()

    done = {name: figures[name] - before[name] for name in FIGURES}
    print(f"\ncrash ({backend}): {done}")
    assert done["files checked"] == CYCLES * WRITERS
    assert lost == [], lost
