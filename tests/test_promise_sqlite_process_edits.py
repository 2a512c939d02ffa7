"""Every kind of edit made through one `wenchang serve` shows at once in another.

Two processes on one SQLite file with default settings (each keeps its own
in-memory index cache). Before each edit the reading process serves its index
(so its cache holds it) and remembers the index ETag; the edit goes through the
writing process; as soon as it returns, the reading process's index lists the
file at the edit's version (or not at all after a delete), its conditional index
is no 304 to the old ETag, and a read answers the new content and version.
The two processes take turns as writer.
"""

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.support.server import running_servers

PATH = "/v1/files/user/notes/plan"


@dataclass(frozen=True, slots=True)
class Processes:
    urls: tuple[str, str]
    token: str


@pytest.fixture(scope="module")
def processes(tmp_path_factory: pytest.TempPathFactory) -> Generator[Processes]:
    directory = tmp_path_factory.mktemp("edits")
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{directory / 'shared.db'}",
        "WENCHANG_TOKENS_FILE": str(directory / "tokens.json"),
    }
    token, _ = create_token(
        directory / "tokens.json", parse_grants(["user=alice:owner"])
    )
    with running_servers(2, directory, settings=settings) as servers:
        yield Processes((servers[0].url, servers[1].url), token)


@pytest.fixture
async def pair(processes: Processes) -> AsyncGenerator[list[httpx.AsyncClient]]:
    auth = {"Authorization": f"Bearer {processes.token}"}
    async with (
        httpx.AsyncClient(base_url=processes.urls[0], headers=auth) as first,
        httpx.AsyncClient(base_url=processes.urls[1], headers=auth) as second,
    ):
        yield [first, second]


class Reader:
    """What one process serves of the file, its index warmed before each edit."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.etag = ""

    async def warm(self) -> None:
        index = await self.http.get("/v1/index")
        assert index.status_code == 200, index.text
        self.etag = index.headers["ETag"]

    async def shows(self, version: str | None, content: str | None) -> None:
        index = await self.http.get("/v1/index")
        assert index.status_code == 200, index.text
        listed = [e["version"] for e in index.json()["entries"] if e["name"] == "plan"]
        assert listed == ([] if version is None else [version]), "stale index"
        again = await self.http.get("/v1/index", headers={"If-None-Match": self.etag})
        assert again.status_code == 200, "304 to the index before the edit"
        read = await self.http.get(PATH)
        if version is None:
            assert read.status_code == 404, read.text
            return
        assert read.status_code == 200, read.text
        assert (read.json()["version"], read.json()["content"]) == (version, content)


def body(content: str) -> dict[str, Any]:
    return {"content": content, "description": "the plan", "aliases": []}


def match(version: str) -> dict[str, str]:
    return {"If-Match": f'"{version}"'}


Step = Callable[[httpx.AsyncClient, str], Awaitable[httpx.Response]]
FIRST = "- [stated] ship on friday\n"
STEPS: list[tuple[str, Step, int, str | None]] = [
    (
        "create",
        lambda http, _: http.put(
            PATH, json=body(FIRST), headers={"If-None-Match": "*"}
        ),
        201,
        FIRST,
    ),
    (
        "append",
        lambda http, v: http.post(
            f"{PATH}/lines", json={"line": "- [stated] tests first"}, headers=match(v)
        ),
        200,
        FIRST + "- [stated] tests first\n",
    ),
    (
        "replace",
        lambda http, v: http.post(
            f"{PATH}/replace",
            json={"old_string": "friday", "new_string": "monday"},
            headers=match(v),
        ),
        200,
        "- [stated] ship on monday\n- [stated] tests first\n",
    ),
    (
        "rewrite",
        lambda http, v: http.put(
            PATH, json=body("- [stated] start over\n"), headers=match(v)
        ),
        200,
        "- [stated] start over\n",
    ),
    ("delete", lambda http, v: http.delete(PATH, headers=match(v)), 204, None),
]


async def test_every_edit_through_one_process_shows_at_once_in_the_other(
    pair: list[httpx.AsyncClient],
) -> None:
    version = ""
    created = ""
    for turn, (kind, send, status, content) in enumerate([*STEPS, *STEPS[1:]]):
        if turn == len(STEPS):
            # Restore the first version in place of the deleted file, then
            # every edit again the other way round.
            reader = Reader(pair[turn % 2])
            await reader.warm()
            restored = await pair[1 - turn % 2].post(
                f"{PATH}/restore",
                json={"version": created},
                headers={"If-None-Match": "*"},
            )
            assert restored.status_code == 201, restored.text
            version = restored.json()["version"]
            await reader.shows(version, FIRST)
        writer, reader = pair[turn % 2], Reader(pair[1 - turn % 2])
        await reader.warm()
        answer = await send(writer, version)
        assert answer.status_code == status, f"{kind}: {answer.text}"
        version = answer.json()["version"] if status != 204 else ""
        created = created or version
        await reader.shows(version or None, content)
