"""Retries after a lost answer apply once: the promises of docs/http.md and
docs/guarantees.md on ``Idempotency-Key``, through the typed client and HTTP.

The riskiest retries are the ones the version guard alone cannot make safe: a
``replace_fact`` whose edit still matches once after it landed (re-applied on
the new version, it would apply twice), and a delete or restore whose retry
meets the state its own first attempt left. A retry may also reach another
process than the first attempt: records are shared by every process on one
SQLite file by default, and by replicas through ``redis://``.
"""

from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Any

import pytest
from wenchang_client import AsyncMemoryClient

from app.server.asgi import build_app
from app.server.settings import Settings
from tests.http_support import FILE, file_body, if_match, open_api
from tests.support.lossy import DropsFirstMutationAnswer, dropping_clients
from tests.support.redis_server import RedisServer
from tests.support.replicas import two_replicas
from tests.support.transports import TokenRegistry, serve_in_thread

QUICK = {"base_delay_seconds": 0.0, "max_delay_seconds": 1.0}
WHERE = ("user", "notes", "tea")
PATH = "/v1/files/user/notes/tea"


class Served:
    def __init__(self, url: str, tokens: TokenRegistry) -> None:
        self.url, self.tokens = url, tokens


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Generator[Served]:
    root = tmp_path_factory.mktemp("retries")
    settings = Settings(
        storage=f"sqlite:///{root / 'wenchang.db'}",
        tokens_file=str(root / "tokens.json"),
        cursor_secret="promise-retries-cursor-secret",
    )
    tokens = TokenRegistry()
    with serve_in_thread(build_app(settings, resolver=tokens)) as url:
        yield Served(url, tokens)


Lossy = tuple[AsyncMemoryClient, AsyncMemoryClient, DropsFirstMutationAnswer]


@pytest.fixture
async def lossy(served: Served) -> AsyncGenerator[Lossy]:
    """A client whose next mutation's answer is lost, and a plain one."""
    async with dropping_clients(served.url, served.tokens, "retries") as clients:
        yield clients


async def create(client: AsyncMemoryClient, content: str = "- [stated] tea\n") -> str:
    made = await client.write_file(
        *WHERE, content=content, description="", aliases=[], expected_version=None
    )
    return made.version


async def test_a_lost_replace_that_still_matches_is_applied_once(lossy: Lossy) -> None:
    """After the edit, ``tea`` still matches once: only the key stops a second
    application of the retry on the new version."""
    losing, plain, proxy = lossy
    version = await create(plain)
    replaced = await losing.replace_fact(
        *WHERE, old_string="tea", new_string="tea and", expected_version=version
    )
    stored = await plain.read_file(*WHERE)
    history = await plain.list_versions(*WHERE)

    assert len(proxy.mutations) == 2
    assert stored.content == "- [stated] tea and\n"
    assert replaced == stored
    assert [entry.operation for entry in history.entries] == [
        "replace_fact",
        "write_file",
    ]


async def test_a_lost_delete_is_retried_to_its_first_answer(lossy: Lossy) -> None:
    """The retry meets a missing file; the key answers the delete that landed."""
    losing, plain, proxy = lossy
    version = await create(plain)
    deleted = await losing.delete_file(*WHERE, expected_version=version)
    index = await plain.get_memory_index()

    assert len(proxy.mutations) == 2
    assert deleted.ok and index.entries == []


async def test_a_lost_restore_of_a_deleted_file_is_applied_once(
    lossy: Lossy,
) -> None:
    """The retry would meet the file its first attempt re-created."""
    losing, plain, proxy = lossy
    version = await create(plain)
    await plain.delete_file(*WHERE, expected_version=version)
    restored = await losing.restore_version(
        *WHERE, version=version, expected_version=None
    )
    stored = await plain.read_file(*WHERE)
    history = await plain.list_versions(*WHERE)

    assert len(proxy.mutations) == 2
    assert restored == stored and stored.content == "- [stated] tea\n"
    assert [entry.operation for entry in history.entries] == [
        "restore_version",
        "delete_file",
        "write_file",
    ]


@pytest.fixture(params=["sqlite-default", "file-redis"])
def replica_settings(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    if request.param == "sqlite-default":
        return {"storage": f"sqlite:///{tmp_path / 'wenchang.db'}"}
    redis: RedisServer = request.getfixturevalue("redis_server")
    return {"storage": f"file://{tmp_path / 'files'}", "request_store": redis.url}


async def test_a_retry_reaching_another_replica_gets_the_first_answer(
    tmp_path: Path, replica_settings: dict[str, str]
) -> None:
    """The replace lands on one replica; its keyed retry on the other is answered
    from the shared record, not applied again."""
    async with two_replicas(tmp_path, **replica_settings) as (first, second, auth):
        body: dict[str, Any] = {"content": "- [stated] tea\n", "aliases": []}
        body |= {"description": "Tea"}
        made = await first.put(PATH, json=body, headers=auth | {"If-None-Match": "*"})
        edit = {"old_string": "tea", "new_string": "tea and"}
        keyed = auth | {"If-Match": made.headers["ETag"], "Idempotency-Key": "r-1"}
        landed = await first.post(f"{PATH}/replace", json=edit, headers=keyed)
        retried = await second.post(f"{PATH}/replace", json=edit, headers=keyed)
        stored = await second.get(PATH, headers=auth)

    assert landed.status_code == retried.status_code == 200, retried.text
    assert retried.json() == landed.json() == stored.json()
    assert retried.headers["ETag"] == landed.headers["ETag"]
    assert stored.json()["content"] == "- [stated] tea and\n"


async def test_without_a_key_a_landed_append_retried_is_a_conflict_never_a_copy(
    tmp_path: Path,
) -> None:
    """The version guard alone: the retry is refused with the current content,
    which holds the line once."""
    async with open_api(tmp_path) as api:
        made = await api.http.put(
            FILE, json=file_body(), headers=api.alice | {"If-None-Match": "*"}
        )
        guard = api.alice | if_match(made.json()["version"])
        line = {"line": "- [stated] b"}
        landed = await api.http.post(f"{FILE}/lines", json=line, headers=guard)
        retried = await api.http.post(f"{FILE}/lines", json=line, headers=guard)

    assert landed.status_code == 200, landed.text
    assert retried.status_code == 412, retried.text
    current = retried.json()["details"]
    assert current["version"] == landed.json()["version"]
    assert current["content"] == landed.json()["content"]
    assert current["content"].count("- [stated] b") == 1
