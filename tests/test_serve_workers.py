"""``wenchang serve --workers N``: N processes on one SQLite file serve together."""

import asyncio
import contextlib
import os
import re
import signal
from pathlib import Path

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.server import run_wenchang, start_server

WORKERS = 2
FILES = 24
STARTUP_SECONDS = 180
STARTED = re.compile(r"Started server process \[(\d+)\]")


def worker_pids(stderr: str, supervisor: int) -> set[int]:
    """Pids uvicorn reports as started, other than the supervisor's own."""
    return {int(pid) for pid in STARTED.findall(stderr)} - {supervisor}


async def create_all(url: str, token: str) -> list[int]:
    headers = {"Authorization": f"Bearer {token}", "If-None-Match": "*"}

    async def create(name: str) -> int:
        # A client per request: a fresh connection, so the kernel may hand it
        # to any worker.
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            body: dict[str, object] = {
                "content": f"- [stated] {name}\n",
                "description": "",
                "aliases": [],
            }
            reply = await http.put(
                f"/v1/files/user/notes/n{name}", json=body, headers=headers
            )
            return reply.status_code

    return await asyncio.gather(*(create(str(i)) for i in range(FILES)))


def test_workers_share_one_sqlite_file(tmp_path: Path) -> None:
    secret, _ = create_token(
        tmp_path / "wenchang-tokens.json", {"user": Grant("alice", "owner")}
    )
    server = start_server(
        tmp_path, logs=tmp_path / "logs", arguments=("--workers", str(WORKERS))
    )
    workers: set[int] = set()
    try:
        # Each spawned worker imports the whole app; the machine may be busy.
        server.wait_until_healthy(timeout=STARTUP_SECONDS)
        statuses = asyncio.run(create_all(server.url, secret))
        index = httpx.get(
            f"{server.url}/v1/index",
            headers={"Authorization": f"Bearer {secret}"},
            timeout=60,
        )
        workers = worker_pids(server.stderr(), server.process.pid)
    finally:
        server.stop()
        for pid in workers:  # only the workers this test started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    assert len(workers) == WORKERS, server.describe()
    assert server.stderr().count("Application startup complete") >= WORKERS
    assert statuses == [201] * FILES
    assert len(index.json()["entries"]) == FILES


def test_workers_refuse_a_private_memory_store(tmp_path: Path) -> None:
    completed = run_wenchang(
        "serve",
        "--workers",
        "2",
        cwd=tmp_path,
        settings={"WENCHANG_STORAGE": "memory://"},
    )

    assert completed.returncode == 2
    assert "--workers needs storage the processes share" in completed.stderr


@pytest.mark.parametrize("count", ["0", "-3"])
def test_workers_must_be_positive(tmp_path: Path, count: str) -> None:
    completed = run_wenchang("serve", "--workers", count, cwd=tmp_path)

    assert completed.returncode == 2
    assert "--workers must be at least 1" in completed.stderr
    # Refused before anything is made: no token minted, no secret printed.
    assert completed.stdout == ""
    assert list(tmp_path.iterdir()) == []
