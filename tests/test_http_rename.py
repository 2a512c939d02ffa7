"""rename_file over HTTP, on the backend ``WENCHANG_TEST_STORAGE`` selects.

``POST /v1/files/{scope}/{area}/{name}/rename`` with body ``{area, name}`` and
If-Match answers the file at its new path with its ETag; the old path is gone,
history follows the file, an existing destination is the 412 a create onto an
existing file gets, a missing If-Match is 428, and an Idempotency-Key retry
answers the first result without moving anything again.
"""

from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from tests.http_support import FILE, Api, create, if_match, open_api

RENAME = f"{FILE}/rename"
MOVED = "/v1/files/user/projects/chai"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as opened:
        yield opened


async def test_rename_answers_the_file_at_its_new_path(api: Api) -> None:
    created = await create(api)

    renamed = await api.http.post(
        RENAME,
        json={"area": "projects", "name": "chai"},
        headers=api.alice | if_match(created["version"]),
    )

    assert renamed.status_code == 200, renamed.text
    body = renamed.json()
    assert (body["area"], body["name"], body["content"]) == (
        "projects",
        "chai",
        created["content"],
    )
    assert renamed.headers["etag"] == f'"{body["version"]}"'
    assert (await api.http.get(FILE, headers=api.alice)).status_code == 404
    read = await api.http.get(MOVED, headers=api.alice)
    assert read.json() == body
    versions = await api.http.get(f"{MOVED}/versions", headers=api.alice)
    assert [e["operation"] for e in versions.json()["entries"]] == [
        "rename_file",
        "write_file",
    ]


async def test_rename_onto_an_existing_file_is_a_412_naming_it(api: Api) -> None:
    created = await create(api)
    there = await create(api, MOVED, "- [stated] Chai.\n")

    refused = await api.http.post(
        RENAME,
        json={"area": "projects", "name": "chai"},
        headers=api.alice | if_match(created["version"]),
    )

    assert refused.status_code == 412, refused.text
    details = refused.json()["details"]
    assert (details["area"], details["name"]) == ("projects", "chai")
    assert details["version"] == there["version"]
    assert (await api.http.get(FILE, headers=api.alice)).status_code == 200


async def test_rename_needs_if_match(api: Api) -> None:
    await create(api)
    refused = await api.http.post(
        RENAME, json={"area": "projects", "name": "chai"}, headers=api.alice
    )
    assert refused.status_code == 428, refused.text
    assert refused.json()["code"] == "PRECONDITION_REQUIRED"
    assert (await api.http.get(FILE, headers=api.alice)).status_code == 200


async def test_rename_retried_with_its_idempotency_key_answers_the_first(
    api: Api,
) -> None:
    created = await create(api)
    headers = api.alice | if_match(created["version"]) | {"Idempotency-Key": "mv-1"}
    body = {"area": "projects", "name": "chai"}

    first = await api.http.post(RENAME, json=body, headers=headers)
    again = await api.http.post(RENAME, json=body, headers=headers)

    assert first.status_code == again.status_code == 200, again.text
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]
    versions = await api.http.get(f"{MOVED}/versions", headers=api.alice)
    assert len(versions.json()["entries"]) == 2


async def test_the_change_feed_shows_the_old_path_then_the_new(api: Api) -> None:
    created = await create(api)
    renamed = await api.http.post(
        RENAME,
        json={"area": "projects", "name": "chai"},
        headers=api.alice | if_match(created["version"]),
    )

    page = await api.http.get("/v1/changes?scope=user", headers=api.alice)

    if page.status_code == 503:
        pytest.skip("this backend keeps no change feed")
    version = renamed.json()["version"]
    assert [
        (c["operation"], c["area"], c["name"], c["version"])
        for c in page.json()["changes"]
    ][-2:] == [
        ("rename_file", "notes", "tea", version),
        ("rename_file", "projects", "chai", version),
    ]
