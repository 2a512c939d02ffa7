"""Search is consistent across processes (docs/search.md, "Consistency"): a
file is found as soon as the write that created or changed it returned, and
never after its delete or purge returned — whichever replica answers.

On the filesystem and GCS each replica keeps the searched corpus in its own
in-memory index cache; both replicas search first (so each holds a corpus),
then one writes and the other searches. A replica that kept its corpus past
another's write would find the old words. On SQLite a write only marks its file
pending in the database and a search indexes it first: a replica that searched
without indexing what another marked would miss the write.
"""

from pathlib import Path

import httpx
import pytest

from app.features.memory.schemas import PurgeMemory
from app.features.memory.use_cases.purge_memory import purge_memory
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from tests.http_support import file_body, open_api
from tests.support.replicas import two_replicas
from tests.support.storage_adapters import storage_url

PATH = "/v1/files/user/notes/tea"


async def names_found(
    replica: httpx.AsyncClient, auth: dict[str, str], query: str
) -> list[str]:
    found = await replica.get("/v1/search", params={"q": query}, headers=auth)
    assert found.status_code == 200, found.text
    return [hit["name"] for hit in found.json()["hits"]]


async def warmed(
    replicas: tuple[httpx.AsyncClient, ...], auth: dict[str, str], query: str
) -> list[list[str]]:
    """What every replica finds for ``query`` (and now holds in its cache)."""
    return [await names_found(replica, auth, query) for replica in replicas]


@pytest.mark.parametrize("backend", ["sqlite", "file", "gcs"])
async def test_every_replica_finds_a_write_at_once_and_a_delete_never(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if backend == "gcs":
        request.getfixturevalue("gcs_emulator")
    settings = {"storage": storage_url(backend, tmp_path)}
    async with two_replicas(tmp_path, **settings) as (first, second, auth):
        replicas = (first, second)
        assert await warmed(replicas, auth, "oolong") == [[], []]
        body = file_body("- [stated] oolong\n")
        made = await first.put(PATH, json=body, headers=auth | {"If-None-Match": "*"})
        assert made.status_code == 201, made.text
        assert await warmed(replicas, auth, "oolong") == [["tea"], ["tea"]]

        changed = await second.post(
            f"{PATH}/replace",
            json={"old_string": "oolong", "new_string": "sencha"},
            headers=auth | {"If-Match": made.headers["ETag"]},
        )
        assert changed.status_code == 200, changed.text
        assert await warmed(replicas, auth, "oolong") == [[], []]
        assert await warmed(replicas, auth, "sencha") == [["tea"], ["tea"]]

        gone = await first.delete(
            PATH, headers=auth | {"If-Match": changed.headers["ETag"]}
        )
        assert gone.status_code == 204, gone.text
        assert await warmed(replicas, auth, "sencha") == [[], []]

        again = await second.put(PATH, json=body, headers=auth | {"If-None-Match": "*"})
        assert again.status_code == 201, again.text
        assert await warmed(replicas, auth, "oolong") == [["tea"], ["tea"]]
        task = Settings(
            storage=settings["storage"], tokens_file=str(tmp_path / "t.json")
        )
        async with create_lifespan(task, surface="task")() as runtime:
            purge = PurgeMemory(scope="user", entity_id="alice", dry_run=False)
            assert (await purge_memory(purge, runtime.context)).objects == 1
        assert await warmed(replicas, auth, "oolong") == [[], []]


async def test_another_entitys_search_cursor_is_refused(tmp_path: Path) -> None:
    """A cursor is bound to the caller's reach: bob presenting alice's, with the
    same query and scope, is INVALID_ARGUMENT(cursor), as a forged one is."""
    async with open_api(tmp_path) as api:
        for name in ("a", "b"):
            made = await api.http.put(
                f"/v1/files/user/notes/{name}",
                json=file_body("- [stated] oolong\n"),
                headers=api.alice | {"If-None-Match": "*"},
            )
            assert made.status_code == 201, made.text
        query = {"q": "oolong", "scope": "user", "limit": 1}
        first = await api.http.get("/v1/search", params=query, headers=api.alice)
        cursor = first.json()["next_cursor"]
        assert cursor
        theirs = await api.http.get(
            "/v1/search", params=query | {"cursor": cursor}, headers=api.bob
        )
        forged = await api.http.get(
            "/v1/search", params=query | {"cursor": cursor[::-1]}, headers=api.bob
        )

    for refused in (theirs, forged):
        assert refused.status_code == 422, refused.text
        assert refused.json()["details"]["argument"] == "cursor"
