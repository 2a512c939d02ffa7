"""GCS behind an unlucky network: a mutation lands, then its answer is lost or late.

The proxy lets the write reach the emulator and then closes the connection
(the adapter retries and meets the precondition its own attempt spent) or
holds the answer past the call's deadline. Either way the write landed, so
the caller is told it succeeded, with the version it made, exactly once:
never a 503, a conflict or a not-found that would make it write again.
"""

import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenchi.testing import open_http
from wenchang_client import transient_retry

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.in_process_client import open_in_process_client

FILE = "/v1/files/user/notes/tea"
OBJECT = "user/alice/notes/tea.md"
DEADLINE_SECONDS = 1
LATE_SECONDS = 2.5
"""Longer than a whole call's deadline: the answer comes after it expired."""


@dataclass(frozen=True)
class Loss:
    """How the answer goes missing: ``hold`` 0 closes the connection."""

    hold: float
    attempts: int


LOSSES = {
    "lost": Loss(0.0, 3),  # the retry meets the precondition its attempt spent
    "late": Loss(LATE_SECONDS, 3),  # the attempt times out, then the same
    "deadline": Loss(LATE_SECONDS, 1),  # the call's deadline expires
}


def body(content: str) -> dict[str, Any]:
    return {"content": content, "description": "tea", "aliases": []}


@pytest.fixture(params=list(LOSSES))
def loss(request: pytest.FixtureRequest) -> Loss:
    return LOSSES[str(request.param)]


@pytest.fixture
def settings(tmp_path: Path, loss: Loss) -> tuple[Settings, str, Path]:
    """The app on a fresh prefix of the emulator bucket, and an owner's token."""
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, {"user": Grant("alice", "owner")})
    storage = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}"
    return (
        Settings(
            storage=f"{storage}?timeout={DEADLINE_SECONDS}&attempts={loss.attempts}",
            tokens_file=str(tokens),
            index_cache="none",
        ),
        secret,
        tokens,
    )


@pytest.fixture
async def http(
    settings: tuple[Settings, str, Path], gcs_emulator: GcsEmulator
) -> AsyncGenerator[httpx.AsyncClient]:
    config, secret, tokens = settings
    app = build_app(config, resolver=TokenFileResolver(tokens))
    async with open_http(app, headers={"Authorization": f"Bearer {secret}"}) as client:
        yield client
    gcs_emulator.proxy.lose_answer(None)  # nothing left staged for the next test
    gcs_emulator.proxy.answer_again()


async def create(http: httpx.AsyncClient, content: str) -> str:
    response = await http.put(FILE, json=body(content), headers={"If-None-Match": "*"})
    assert response.status_code == 201, response.text
    return response.headers["ETag"]


async def assert_stored(http: httpx.AsyncClient, etag: str, content: str) -> None:
    response = await http.get(FILE)
    assert response.status_code == 200, response.text
    assert response.headers["ETag"] == etag
    assert response.json()["content"] == content


async def test_a_replace_whose_answer_is_lost_succeeds_with_its_version(
    http: httpx.AsyncClient, gcs_emulator: GcsEmulator, loss: Loss
) -> None:
    etag = await create(http, "- [stated] Likes tea.\n")
    lost = gcs_emulator.proxy.lost
    gcs_emulator.proxy.lose_answer(OBJECT, hold=loss.hold)

    response = await http.put(
        FILE, json=body("- [stated] Likes green tea.\n"), headers={"If-Match": etag}
    )

    assert gcs_emulator.proxy.lost == lost + 1  # the answer really was lost
    assert response.status_code == 200, response.text
    assert response.headers["ETag"] != etag
    await assert_stored(http, response.headers["ETag"], "- [stated] Likes green tea.\n")
    history = (await http.get(f"{FILE}/versions")).json()["entries"]
    versions = [f'"{entry["version"]}"' for entry in history]
    assert versions == [response.headers["ETag"], etag]  # each write once


async def test_a_create_whose_answer_is_lost_succeeds_with_its_version(
    http: httpx.AsyncClient, gcs_emulator: GcsEmulator, loss: Loss
) -> None:
    gcs_emulator.proxy.lose_answer(OBJECT, hold=loss.hold)

    etag = await create(http, "- [stated] Likes tea.\n")

    assert gcs_emulator.proxy.lost >= 1
    await assert_stored(http, etag, "- [stated] Likes tea.\n")


async def test_a_delete_whose_answer_is_lost_succeeds(
    http: httpx.AsyncClient, gcs_emulator: GcsEmulator, loss: Loss
) -> None:
    etag = await create(http, "- [stated] Likes tea.\n")
    lost = gcs_emulator.proxy.lost
    gcs_emulator.proxy.lose_answer(OBJECT, hold=loss.hold)

    response = await http.delete(FILE, headers={"If-Match": etag})

    assert gcs_emulator.proxy.lost == lost + 1
    assert response.status_code == 204, response.text
    assert (await http.get(FILE)).status_code == 404


async def test_an_append_whose_answer_is_lost_lands_once_through_the_client(
    settings: tuple[Settings, str, Path], gcs_emulator: GcsEmulator, loss: Loss
) -> None:
    """The typed client retries a 503 with its Idempotency-Key; the line lands once."""
    config, secret, tokens = settings
    app = build_app(config, resolver=TokenFileResolver(tokens))
    retry = transient_retry(max_attempts=4, total_timeout_seconds=60)
    async with open_in_process_client(app, token=secret, retry=retry) as client:
        created = await client.write_file(
            "user",
            "notes",
            "tea",
            content="",
            description="",
            aliases=[],
            expected_version=None,
        )
        lost = gcs_emulator.proxy.lost
        gcs_emulator.proxy.lose_answer(OBJECT, hold=loss.hold)
        appended = await client.append_line(
            "user",
            "notes",
            "tea",
            line="- [stated] Likes tea.",
            expected_version=created.version,
        )
        stored = await client.read_file("user", "notes", "tea")

    assert gcs_emulator.proxy.lost == lost + 1
    assert stored.content.splitlines() == ["- [stated] Likes tea."]
    assert stored.version == appended.version


async def test_a_write_whose_landing_cannot_be_checked_says_the_outcome_is_unknown(
    http: httpx.AsyncClient, gcs_emulator: GcsEmulator, loss: Loss
) -> None:
    """GCS stops answering right after the write landed: a 503 that says so."""
    etag = await create(http, "- [stated] Likes tea.\n")
    gcs_emulator.proxy.lose_answer(OBJECT, hold=loss.hold, then_down=True)

    response = await http.put(
        FILE, json=body("- [stated] Likes green tea.\n"), headers={"If-Match": etag}
    )
    gcs_emulator.proxy.answer_again()

    assert response.status_code == 503, response.text
    assert response.json()["details"]["outcome"] == "unknown"
    assert "read the file" in response.json()["message"]
    stored = await http.get(FILE)  # it did land: only a read could tell
    assert stored.json()["content"] == "- [stated] Likes green tea.\n"
