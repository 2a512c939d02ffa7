"""A write whose replica cannot reach the shared Redis index cache (docs/deploying.md,
"Index cache across replicas"), over HTTP with two replicas on one backend.

The writer reaches Redis through a proxy that is cut while it writes; the
reader reaches Redis directly and has the entity's index cached. The write has
landed, so it answers its result (an unkeyed append that got a 503 would be
retried and land twice), and the reader's next index, conditional or not,
holds the write: the write moved the entity's change marker in the backend,
which every replica checks before serving a listing from Redis.
"""

import uuid
from pathlib import Path

import pytest

from tests.http_support import FILE, create, if_match, open_api
from tests.support.redis_server import RedisServer
from tests.support.storage_adapters import storage_url
from tests.support.tcp_proxy import tcp_proxy

LINE = "- [stated] Likes oolong."


@pytest.fixture(params=["sqlite", "file", "gcs"])
def shared_storage(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "gcs":
        request.getfixturevalue("gcs_emulator")
    return storage_url(str(request.param), tmp_path)


async def test_a_write_that_cannot_reach_redis_answers_and_no_replica_serves_it_stale(
    tmp_path: Path, redis_server: RedisServer, shared_storage: str
) -> None:
    key_prefix = f"?key_prefix=u-{uuid.uuid4().hex}:"
    for replica in ("writer", "reader"):
        (tmp_path / replica).mkdir()
    async with (
        tcp_proxy(redis_server.port) as proxy,
        open_api(
            tmp_path / "writer",
            storage=shared_storage,
            index_cache=f"redis://127.0.0.1:{proxy.port}/0{key_prefix}",
        ) as writer,
        open_api(
            tmp_path / "reader",
            storage=shared_storage,
            index_cache=redis_server.url + key_prefix,
        ) as reader,
    ):
        created = await create(writer, content="# Tea")
        seen = await reader.http.get("/v1/index", headers=reader.alice)
        assert seen.status_code == 200, seen.text
        assert (await reader.http.get("/v1/index", headers=reader.alice)).json() == (
            seen.json()
        )  # served from Redis now
        with proxy.cut():
            appended = await writer.http.post(
                f"{FILE}/lines",
                json={"line": LINE},
                headers=writer.alice | if_match(created["version"]),
            )
        assert proxy.dropped > 0  # the writer really could not reach Redis
        index = await reader.http.get("/v1/index", headers=reader.alice)
        held = await reader.http.get(
            "/v1/index",
            headers=reader.alice | {"If-None-Match": seen.headers["ETag"]},
        )
        stored = await reader.http.get(FILE, headers=reader.alice)
        own = await writer.http.get("/v1/index", headers=writer.alice)

    assert appended.status_code == 200, appended.text
    version = appended.json()["version"]
    assert [e["version"] for e in index.json()["entries"]] == [version]
    assert held.status_code == 200, held.text
    assert held.json() == index.json()
    assert stored.json()["content"] == f"# Tea\n{LINE}\n"
    assert [e["version"] for e in own.json()["entries"]] == [version]
