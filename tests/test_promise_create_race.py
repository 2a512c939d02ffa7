"""A create that loses to a file deleted at once is tried again, never answered 404.

Two `wenchang serve` processes share one SQLite file. Through one, a churner
creates and deletes the same file over and over (four at once); through the other,
four creators race it with ``If-None-Match: *``. Each answer is a create (201) or
VERSION_CONFLICT (412) naming the file that stood there — never "not found",
which is what a create that read the conflict after the delete would answer.
"""

import asyncio
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.support.server import running_servers

PATH = "/v1/files/user/notes/contested"
CREATES = 300
RACERS = 4
BODY: dict[str, Any] = {
    "content": "- [stated] here\n",
    "description": "",
    "aliases": [],
}
CREATE = {"If-None-Match": "*"}


@pytest.fixture
def servers(tmp_path: Path) -> Generator[tuple[str, str, str]]:
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'shared.db'}",
        "WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json"),
        "WENCHANG_RATE_LIMIT": "0",
    }
    token, _ = create_token(tmp_path / "tokens.json", parse_grants(["user=a:owner"]))
    with running_servers(2, tmp_path, settings=settings) as (first, second):
        yield first.url, second.url, token


async def churn(http: httpx.AsyncClient, stop: asyncio.Event) -> None:
    """Create the file and delete it again until told to stop."""
    while not stop.is_set():
        made = await http.put(PATH, json=BODY, headers=CREATE)
        if made.status_code == 201:
            gone = await http.delete(PATH, headers={"If-Match": made.headers["ETag"]})
            assert gone.status_code in (204, 412), gone.text


async def create(http: httpx.AsyncClient, answers: Counter[int]) -> None:
    for _ in range(CREATES // RACERS):
        answer = await http.put(PATH, json=BODY, headers=CREATE)
        answers[answer.status_code] += 1
        assert answer.status_code in (201, 412), answer.text
        if answer.status_code == 412:
            assert answer.json()["details"]["version"], answer.text
        else:
            await http.delete(PATH, headers={"If-Match": answer.headers["ETag"]})


async def test_racing_creates_are_created_or_conflict_with_a_file(
    servers: tuple[str, str, str],
) -> None:
    first, second, token = servers
    auth = {"Authorization": f"Bearer {token}"}
    answers: Counter[int] = Counter()
    stop = asyncio.Event()
    async with (
        httpx.AsyncClient(base_url=first, headers=auth, timeout=30) as churner,
        httpx.AsyncClient(base_url=second, headers=auth, timeout=30) as creator,
    ):
        churning = [asyncio.create_task(churn(churner, stop)) for _ in range(RACERS)]
        try:
            await asyncio.gather(*(create(creator, answers) for _ in range(RACERS)))
        finally:
            stop.set()
            await asyncio.gather(*churning)
    assert answers[412] > 0, answers  # the race was run
