"""A hot file on GCS: a burst of appends against the per-object mutation limit.

GCS answers 429 past about one mutation per second per object; the emulator
never does, so the proxy in front of it does (its interval scaled down). 50
appends to one file from 10 concurrent writers through the typed client end
with every line in the file exactly once: each 429 is retried inside the
request's deadline, a stale version is retried at the version the conflict
reports, and a retried mutation carries its Idempotency-Key. A write whose
answer GCS lost is answered as the success it was; past the client's retries
(a loaded machine) a writer does what each error says: a plain 503 applied
nothing, one whose outcome is unknown means reading the file first.
"""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from wenchang_client import (
    AsyncMemoryClient,
    BackendUnavailableError,
    VersionConflictError,
    transient_retry,
)

from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.gcs_emulator import GcsEmulator
from tests.support.storage_adapters import storage_url
from tests.support.transports import TokenRegistry, serve_in_thread

WRITERS = 10
LINES_PER_WRITER = 5
MIN_INTERVAL_SECONDS = 0.05
WHERE = ("user", "notes", "hot")


@pytest.fixture
def server(tmp_path: Path, gcs_emulator: GcsEmulator) -> Iterator[tuple[str, str]]:
    tokens = TokenRegistry()
    token = tokens.issue(Identity(grants={"user": Grant("alice", "owner")}))
    settings = Settings(
        storage=storage_url("gcs", tmp_path).replace("timeout=5", "timeout=30"),
        tokens_file=str(tmp_path / "tokens.json"),
        cursor_secret="gcs-hot-object-cursor-secret",
        max_file_bytes=65536,
    )
    with serve_in_thread(build_app(settings, resolver=tokens)) as url:
        gcs_emulator.proxy.limit_rate(MIN_INTERVAL_SECONDS)
        try:
            yield url, token
        finally:
            gcs_emulator.proxy.limit_rate(0)


async def append_until_landed(
    client: AsyncMemoryClient, line: str, version: str
) -> None:
    while True:
        try:
            await client.append_line(*WHERE, line=line, expected_version=version)
            return
        except VersionConflictError as conflict:
            version = conflict.version
        except BackendUnavailableError as unavailable:
            # The client's retries ran out (a loaded machine). A plain 503 applied
            # nothing; one whose outcome is unknown may have: the file tells, as
            # the error says. A wrong answer either way still shows in the file.
            if unavailable.details.get("outcome") == "unknown":
                stored = await client.read_file(*WHERE)
                if line in stored.content.splitlines():
                    return
                version = stored.version


async def writer(client: AsyncMemoryClient, tag: int, version: str) -> None:
    for n in range(LINES_PER_WRITER):
        await append_until_landed(client, f"- [stated] w{tag} n{n}", version)


async def test_a_burst_of_appends_to_one_gcs_file_lands_each_line_once(
    server: tuple[str, str], gcs_emulator: GcsEmulator
) -> None:
    url, token = server
    policy = transient_retry(max_attempts=10, total_timeout_seconds=120)
    async with AsyncMemoryClient(url, token=token, retry=policy) as client:
        created = await client.write_file(
            *WHERE, content="", description="", aliases=[], expected_version=None
        )
        await asyncio.gather(
            *(writer(client, tag, created.version) for tag in range(WRITERS))
        )
        stored = await client.read_file(*WHERE)

    lines = stored.content.splitlines()
    expected = {
        f"- [stated] w{tag} n{n}"
        for tag in range(WRITERS)
        for n in range(LINES_PER_WRITER)
    }
    assert sorted(lines) == sorted(expected)  # every line, each exactly once
    assert gcs_emulator.proxy.rate_limited > 0  # GCS's limit was really in play
