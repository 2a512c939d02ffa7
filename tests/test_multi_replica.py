"""Two ``wenchang serve`` processes on one GCS bucket and one Redis index cache.

Workers on both replicas read-modify-write the same files with ``If-Match``
and retry on 412. Every committed line must be in its file exactly once (no
lost and no duplicated update), and both replicas' indexes — warmed before
the writes, so a missed invalidation would show — must list every file at the
version it ended with.
"""

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Generator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.loopback import LOOPBACK, free_port
from tests.support.redis_server import RedisServer

REPLICAS = 2
WORKERS_PER_REPLICA = 4
WRITES_PER_WORKER = 6
FILES = ("alpha", "beta", "gamma")
MAX_ATTEMPTS_PER_WRITE = 200
START_ATTEMPTS = 400
STOP_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Replica:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def serving(storage: str, env: Mapping[str, str], log: Path) -> Generator[Replica]:
    """``wenchang serve --storage … --port P`` on loopback; stopped on exit."""
    port = free_port()
    command = [str(Path(sys.executable).parent / "wenchang"), "serve"]
    command += ["--storage", storage, "--host", LOOPBACK, "--port", str(port)]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=log.parent,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    try:
        yield Replica(f"http://{LOOPBACK}:{port}", process, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_TIMEOUT_SECONDS)


async def wait_until_healthy(http: httpx.AsyncClient, replica: Replica) -> None:
    for _ in range(START_ATTEMPTS):
        if replica.process.poll() is not None:
            pytest.fail(f"replica exited early:\n{replica.log.read_text()}")
        try:
            if (await http.get(f"{replica.url}/health")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.05)
    pytest.fail(f"replica never became healthy:\n{replica.log.read_text()}")


async def append_line(http: httpx.AsyncClient, base: str, name: str, line: str) -> int:
    """Read, append ``line``, write with If-Match; retry until it lands.

    Returns how many attempts lost a race (412). A 503 is retried the same
    way: the guarded write cannot land twice.
    """
    path = f"{base}/v1/files/user/notes/{name}"
    conflicts = 0
    for _ in range(MAX_ATTEMPTS_PER_WRITE):
        current = await http.get(path)
        assert current.status_code == 200, current.text
        content = current.json()["content"] + f"{line}\n"
        body: dict[str, Any] = {"content": content, "description": name, "aliases": []}
        written = await http.put(
            path, json=body, headers={"If-Match": current.headers["ETag"]}
        )
        if written.status_code == 200:
            return conflicts
        assert written.status_code in (412, 503), written.text
        conflicts += written.status_code == 412
    pytest.fail(f"{line} did not land in {MAX_ATTEMPTS_PER_WRITE} attempts")


async def worker(http: httpx.AsyncClient, base: str, tag: str) -> tuple[list[str], int]:
    lines: list[str] = []
    conflicts = 0
    for n in range(WRITES_PER_WORKER):
        line = f"- [stated] {tag} write {n}"
        conflicts += await append_line(http, base, FILES[n % len(FILES)], line)
        lines.append(line)
    return lines, conflicts


async def index_versions(http: httpx.AsyncClient, base: str) -> dict[str, str]:
    index = await http.get(f"{base}/v1/index")
    assert index.status_code == 200, index.text
    assert index.json()["capped"] == []
    return {entry["name"]: entry["version"] for entry in index.json()["entries"]}


async def test_two_replicas_on_one_bucket_lose_and_duplicate_no_update(
    gcs_emulator: GcsEmulator, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Racing guarded writes through two processes all land exactly once."""
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, {"user": Grant("alice", "owner")})
    env = {k: v for k, v in os.environ.items() if not k.startswith("WENCHANG_")}
    env |= {
        "STORAGE_EMULATOR_HOST": gcs_emulator.url,
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_INDEX_CACHE": f"{redis_server.url}?key_prefix=mr-{uuid.uuid4().hex}:",
        "WENCHANG_INDEX_CACHE_TTL": "300",
    }
    storage = f"gcs://{TEST_BUCKET}/mr-{uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {secret}"}
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(serving(storage, env, tmp_path / f"replica-{n}.log"))
            for n in range(REPLICAS)
        ]
        async with httpx.AsyncClient(headers=headers, timeout=30.0) as http:
            for replica in replicas:
                await wait_until_healthy(http, replica)
            first = replicas[0].url
            for name in FILES:
                created = await http.put(
                    f"{first}/v1/files/user/notes/{name}",
                    json={"content": "", "description": name, "aliases": []},
                    headers={"If-None-Match": "*"},
                )
                assert created.status_code == 201, created.text
            for replica in replicas:
                assert set(await index_versions(http, replica.url)) == set(FILES)

            results = await asyncio.gather(
                *(
                    worker(http, replica.url, f"r{r}w{w}")
                    for r, replica in enumerate(replicas)
                    for w in range(WORKERS_PER_REPLICA)
                )
            )

            committed = sorted(line for lines, _ in results for line in lines)
            stored: list[str] = []
            versions: dict[str, str] = {}
            for name in FILES:
                read = await http.get(f"{first}/v1/files/user/notes/{name}")
                stored += read.json()["content"].splitlines()
                versions[name] = read.headers["ETag"].strip('"')
            assert sorted(stored) == committed
            assert sum(conflicts for _, conflicts in results) > 0, "no race happened"
            for replica in replicas:
                assert await index_versions(http, replica.url) == versions
