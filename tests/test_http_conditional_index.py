"""Conditional GET /v1/index: the ETag names the caller's whole index.

A caller that still holds the current index gets a 304 with no body; any write,
delete or purge that reaches the index, made by any app on the same SQLite file,
moves the tag, and so does a file of the index expiring (no write at all), so
revalidation never keeps a stale index.
"""

import asyncio
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tests.http_support import FILE, Api, create, file_body, if_match, open_api

FILE_BRIEF = "/v1/files/user/notes/brief"


def sqlite_settings(tmp_path: Path) -> dict[str, str]:
    # index_cache=memory: each app keeps its own listings, which must not mask
    # another app's write.
    return {"storage": f"sqlite:///{tmp_path / 'shared.db'}", "index_cache": "memory"}


@pytest.fixture
async def apps(tmp_path: Path) -> AsyncGenerator[tuple[Api, Api]]:
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(
            open_api(tmp_path, **sqlite_settings(tmp_path))
        )
        second = await stack.enter_async_context(
            open_api(tmp_path, **sqlite_settings(tmp_path))
        )
        yield first, second


async def current_tag(api: Api, headers: dict[str, str]) -> str:
    reply = await api.http.get("/v1/index", headers=headers)
    assert reply.status_code == 200, reply.text
    return reply.headers["ETag"]


async def test_the_current_tag_answers_304_without_a_body(
    apps: tuple[Api, Api],
) -> None:
    api, _ = apps
    await create(api)
    full = await api.http.get("/v1/index", headers=api.alice)
    tag = full.headers["ETag"]

    again = await api.http.get("/v1/index", headers=api.alice | {"If-None-Match": tag})

    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["ETag"] == tag
    weak = await api.http.get(
        "/v1/index", headers=api.alice | {"If-None-Match": f'"other", W/{tag}'}
    )
    assert weak.status_code == 304


async def test_a_write_through_another_app_on_the_same_file_moves_the_tag(
    apps: tuple[Api, Api],
) -> None:
    first, second = apps
    await create(first)
    tag = await current_tag(first, first.alice)
    assert await current_tag(second, second.alice) == tag

    await second.http.put(
        "/v1/files/user/notes/coffee",
        json=file_body("- [stated] Coffee too.\n"),
        headers=second.alice | {"If-None-Match": "*"},
    )
    reply = await first.http.get(
        "/v1/index", headers=first.alice | {"If-None-Match": tag}
    )

    assert reply.status_code == 200
    assert reply.headers["ETag"] != tag
    assert {entry["name"] for entry in reply.json()["entries"]} == {"tea", "coffee"}


async def test_a_delete_moves_the_tag(apps: tuple[Api, Api]) -> None:
    first, second = apps
    created = await create(first)
    tag = await current_tag(first, first.alice)

    deleted = await second.http.delete(
        FILE, headers=second.alice | if_match(created["version"])
    )
    assert deleted.status_code == 204, deleted.text
    reply = await first.http.get(
        "/v1/index", headers=first.alice | {"If-None-Match": tag}
    )

    assert reply.status_code == 200
    assert reply.json()["entries"] == []


async def test_the_tag_belongs_to_the_callers_grants(apps: tuple[Api, Api]) -> None:
    api, _ = apps
    await create(api)
    alices = await current_tag(api, api.alice)

    bobs = await api.http.get("/v1/index", headers=api.bob | {"If-None-Match": alices})

    assert bobs.status_code == 200
    assert bobs.headers["ETag"] != alices
    assert await current_tag(api, api.desktop) != alices


@pytest.mark.parametrize("index_cache", ["none", "memory"])
async def test_a_file_expiring_moves_the_tag(tmp_path: Path, index_cache: str) -> None:
    settings = sqlite_settings(tmp_path) | {"index_cache": index_cache}
    async with open_api(tmp_path, **settings) as api:
        for name, ttl in (("brief", 1), ("later", 3600)):
            reply = await api.http.put(
                f"/v1/files/user/notes/{name}",
                json=file_body() | {"ttl_seconds": ttl},
                headers=api.alice | {"If-None-Match": "*"},
            )
            assert reply.status_code == 201, reply.text
        tag = await current_tag(api, api.alice)
        # Waits for the expiry itself, however slow the machine (no timing asserted).
        while (await api.http.get(FILE_BRIEF, headers=api.alice)).status_code == 200:
            await asyncio.sleep(0.1)

        after = await api.http.get(
            "/v1/index", headers=api.alice | {"If-None-Match": tag}
        )
        held = await api.http.get(
            "/v1/index", headers=api.alice | {"If-None-Match": after.headers["ETag"]}
        )

    assert after.status_code == 200
    assert after.headers["ETag"] != tag
    assert [entry["name"] for entry in after.json()["entries"]] == ["later"]
    assert held.status_code == 304
