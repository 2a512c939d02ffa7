"""A shared index cache that is down (docs/deploying.md, "Index cache across
replicas"), over HTTP: index reads answer 503 BACKEND_UNAVAILABLE with
Retry-After, never a stale or partial answer; a write lands and answers its
result (its invalidation moves the entity's change marker in the backend
instead), so a retry of it is a conflict carrying its content; once Redis is
back, the index holds the write.
"""

from pathlib import Path

import httpx

from tests.http_support import FILE, file_body, open_api
from tests.support.redis_server import RedisServer


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "BACKEND_UNAVAILABLE"
    assert response.headers["Retry-After"]


async def test_with_redis_down_the_index_is_503_writes_land_then_it_resumes(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    create = {"If-None-Match": "*"}
    async with open_api(tmp_path, index_cache=redis_server.url) as api:
        assert (await api.http.get("/v1/index", headers=api.alice)).status_code == 200
        with redis_server.down():
            index = await api.http.get("/v1/index", headers=api.alice)
            write = await api.http.put(
                FILE, json=file_body(), headers=api.alice | create
            )
        retry = await api.http.put(FILE, json=file_body(), headers=api.alice | create)
        after = await api.http.get("/v1/index", headers=api.alice)

    assert_unavailable(index)
    assert write.status_code == 201, write.text
    assert retry.status_code == 412, retry.text
    assert retry.json()["details"]["content"] == file_body()["content"]
    assert [entry["name"] for entry in after.json()["entries"]] == ["tea"]
