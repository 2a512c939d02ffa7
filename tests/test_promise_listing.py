"""Listings are never stale across processes (docs/guarantees.md): a listing
served by any process after a write returned includes that write, and none
after a delete returned shows the file, whatever each process cached.

Two replicas on one filesystem store, each with its own in-memory index cache,
both warmed before every change; the index and the area listing must agree.
"""

from pathlib import Path

import httpx

from tests.http_support import file_body
from tests.support.replicas import two_replicas

AREA = "/v1/files/user/notes"


async def listed(
    replicas: tuple[httpx.AsyncClient, ...], auth: dict[str, str]
) -> list[list[str]]:
    """The names each replica lists in the area and in its index, which it
    now caches; both must agree."""
    names: list[list[str]] = []
    for replica in replicas:
        page = await replica.get(AREA, headers=auth)
        index = await replica.get("/v1/index", headers=auth)
        assert page.status_code == index.status_code == 200, page.text
        listed = [entry["name"] for entry in page.json()["entries"]]
        assert [entry["name"] for entry in index.json()["entries"]] == listed
        names.append(listed)
    return names


async def test_every_replica_lists_a_write_and_a_delete_at_once(tmp_path: Path) -> None:
    storage = f"file://{tmp_path / 'files'}"
    async with two_replicas(tmp_path, storage=storage) as (first, second, auth):
        replicas = (first, second)
        assert await listed(replicas, auth) == [[], []]
        made = await first.put(
            f"{AREA}/tea", json=file_body(), headers=auth | {"If-None-Match": "*"}
        )
        assert made.status_code == 201, made.text
        assert await listed(replicas, auth) == [["tea"], ["tea"]]

        gone = await second.delete(
            f"{AREA}/tea", headers=auth | {"If-Match": made.headers["ETag"]}
        )
        assert gone.status_code == 204, gone.text
        assert await listed(replicas, auth) == [[], []]
