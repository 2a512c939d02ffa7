"""The HTTP API on GCS storage while the emulator is unreachable or stopped.

Calls fail fast with 503 + Retry-After, nothing is half-written, and service
resumes when the emulator returns.
"""

import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenchi.testing import open_http

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator

FILE = "/v1/files/user/notes/tea"


def body(content: str, description: str) -> dict[str, Any]:
    return {"content": content, "description": description, "aliases": []}


@pytest.fixture
async def http(
    gcs_emulator: GcsEmulator, tmp_path: Path
) -> AsyncGenerator[httpx.AsyncClient]:
    """The app on a fresh prefix of the emulator bucket, 1 s per storage call."""
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, {"user": Grant("alice", "owner")})
    settings = Settings(
        storage=f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?timeout=1&attempts=2",
        tokens_file=str(tokens),
        index_cache="none",
    )
    app = build_app(settings, resolver=TokenFileResolver(tokens))
    async with open_http(app, headers={"Authorization": f"Bearer {secret}"}) as client:
        yield client


async def create(http: httpx.AsyncClient) -> str:
    response = await http.put(
        FILE,
        json=body("- [stated] Likes tea.\n", "before"),
        headers={"If-None-Match": "*"},
    )
    assert response.status_code == 201, response.text
    return response.headers["ETag"]


def assert_unavailable(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "1"
    assert response.json()["code"] == "BACKEND_UNAVAILABLE"
    assert response.json()["details"]["reason"] == reason
    assert TEST_BUCKET not in response.text


async def test_files_are_written_and_read_through_gcs(http: httpx.AsyncClient) -> None:
    """A create and a read round-trip; the ETag is the object's generation."""
    etag = await create(http)

    response = await http.get(FILE)

    assert response.status_code == 200
    assert response.headers["ETag"] == etag and etag.strip('"').isdigit()
    assert response.json()["content"] == "- [stated] Likes tea.\n"


async def test_an_unreachable_emulator_is_503_and_nothing_is_written(
    http: httpx.AsyncClient, gcs_emulator: GcsEmulator
) -> None:
    """Refused connections: writes, reads and /health answer 503; state is kept."""
    etag = await create(http)

    with gcs_emulator.unreachable():
        write = await http.put(
            FILE,
            json=body("- [stated] Changed.\n", "during"),
            headers={"If-Match": etag},
        )
        read = await http.get(FILE)
        health = await http.get("/health")

    assert_unavailable(write, "unavailable")
    assert_unavailable(read, "unavailable")
    assert health.status_code == 503
    # docs/errors.md: UNHEALTHY, transient, with `checks`; no backend message.
    assert health.json()["code"] == "UNHEALTHY"
    assert health.json()["details"]["category"] == "transient"
    assert "checks" in health.json()["details"]
    after = await http.get(FILE)
    assert after.headers["ETag"] == etag
    assert (after.json()["content"], after.json()["description"]) == (
        "- [stated] Likes tea.\n",
        "before",
    )
    retried = await http.put(
        FILE, json=body("- [stated] Changed.\n", "after"), headers={"If-Match": etag}
    )
    assert retried.status_code == 200, retried.text


async def test_a_stopped_emulator_times_out_as_503_and_service_resumes(
    http: httpx.AsyncClient, gcs_emulator: GcsEmulator
) -> None:
    """A hung emulator: 503 ``timeout``; afterwards the file is whole, old or new.

    The write may still land once the emulator resumes (its request was
    sent); the version-guarded retry then sees its own write as a conflict,
    so nothing is lost or applied twice.
    """
    etag = await create(http)
    old = ("- [stated] Likes tea.\n", "before")
    new = ("- [stated] Changed.\n", "during")

    with gcs_emulator.frozen():
        write = await http.put(FILE, json=body(*new), headers={"If-Match": etag})
        read = await http.get(FILE)

    assert_unavailable(write, "timeout")
    assert_unavailable(read, "timeout")
    after = (await http.get(FILE)).json()
    assert (after["content"], after["description"]) in (old, new)
    retried = await http.put(FILE, json=body(*new), headers={"If-Match": etag})
    assert retried.status_code in (200, 412), retried.text
    if retried.status_code == 412:
        assert retried.json()["details"]["content"] == new[0]
    final = (await http.get(FILE)).json()
    assert (final["content"], final["description"]) == new
