"""Every route of docs/http.md through the composed app, on its success path."""

import re
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from tests.http_support import FILE, Api, create, file_body, if_match, open_api

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z")
FILE_KEYS = [
    "scope",
    "area",
    "name",
    "content",
    "version",
    "description",
    "aliases",
    "sources",
    "last_updated",
]


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as api:
        yield api


async def test_put_with_if_none_match_star_creates_with_201(api: Api) -> None:
    """A create answers 201 with the file object and its version as ETag."""
    response = await api.http.put(
        FILE,
        json=file_body(aliases=["cha"]),
        headers=api.alice | {"If-None-Match": "*"},
    )

    assert response.status_code == 201
    created = response.json()
    assert list(created) == FILE_KEYS
    assert {k: v for k, v in created.items() if k != "last_updated"} == {
        "scope": "user",
        "area": "notes",
        "name": "tea",
        "content": "- [stated] Likes tea.\n",
        "version": created["version"],
        "description": "Drinks",
        "aliases": ["cha"],
        "sources": ["http"],
    }
    assert TIMESTAMP.fullmatch(created["last_updated"])
    assert response.headers["ETag"] == f'"{created["version"]}"'


async def test_put_with_if_match_replaces_with_200(api: Api) -> None:
    """A replace at the current version answers 200 with the new ETag."""
    first = await create(api)

    response = await api.http.put(
        FILE,
        json=file_body("new", "New", ["x"]),
        headers=api.alice | if_match(first["version"]),
    )

    assert response.status_code == 200
    replaced = response.json()
    assert (replaced["content"], replaced["description"]) == ("new", "New")
    assert replaced["version"] != first["version"]
    assert response.headers["ETag"] == f'"{replaced["version"]}"'


async def test_get_file_returns_the_file_and_its_etag(api: Api) -> None:
    """A read returns the same object the write did, with ETag "<version>"."""
    created = await create(api)

    response = await api.http.get(FILE, headers=api.alice)

    assert response.status_code == 200
    assert response.json() == created
    assert response.headers["ETag"] == f'"{created["version"]}"'


async def test_post_lines_appends_a_fact_line(api: Api) -> None:
    """POST …/lines appends at the If-Match version and returns the new ETag."""
    first = await create(api, content="# Tea")

    response = await api.http.post(
        f"{FILE}/lines",
        json={"line": "- [observed] Brews oolong.", "aliases": ["cha"]},
        headers=api.alice | if_match(first["version"]),
    )

    assert response.status_code == 200
    appended = response.json()
    assert appended["content"] == "# Tea\n- [observed] Brews oolong.\n"
    assert appended["aliases"] == ["cha"]
    assert response.headers["ETag"] == f'"{appended["version"]}"'


async def test_post_replace_replaces_one_span(api: Api) -> None:
    """POST …/replace swaps the unique span and returns the new ETag."""
    first = await create(api)

    response = await api.http.post(
        f"{FILE}/replace",
        json={"old_string": "tea", "new_string": "coffee", "description": "Beans"},
        headers=api.alice | if_match(first["version"]),
    )

    assert response.status_code == 200
    replaced = response.json()
    assert replaced["content"] == "- [stated] Likes coffee.\n"
    assert replaced["description"] == "Beans"
    assert response.headers["ETag"] == f'"{replaced["version"]}"'


async def test_delete_answers_204_and_the_file_is_gone(api: Api) -> None:
    """DELETE at the current version answers 204 with no body."""
    first = await create(api)

    response = await api.http.delete(
        FILE, headers=api.alice | if_match(first["version"])
    )

    assert response.status_code == 204
    assert response.content == b""
    gone = await api.http.get(FILE, headers=api.alice)
    assert gone.status_code == 404
    assert gone.json()["details"]["reason"] == "file_absent"


async def test_get_index_returns_entries_and_capped(api: Api) -> None:
    """The index lists file entries without content, and capped == [] when complete."""
    created = await create(api)

    response = await api.http.get("/v1/index", headers=api.alice)

    assert response.status_code == 200
    created.pop("content")
    assert response.json() == {"entries": [created], "capped": []}


async def test_get_index_reports_capped_areas(tmp_path: Path) -> None:
    """Entries past the byte budget are counted per area."""
    async with open_api(tmp_path, index_max_bytes=1) as api:
        await create(api)

        response = await api.http.get("/v1/index", headers=api.alice)

    assert response.json() == {
        "entries": [],
        "capped": [{"scope": "user", "area": "notes", "omitted": 1}],
    }


async def test_list_scope_pages_through_every_area(api: Api) -> None:
    """GET /v1/files/{scope} pages ascending by key; the cursor round-trips."""
    for path in ["user/b/x", "user/a/x", "user/a-b/x"]:
        await create(api, f"/v1/files/{path}")

    first = await api.http.get("/v1/files/user", headers=api.alice)
    cursor = first.json()["next_cursor"]
    second = await api.http.get(
        "/v1/files/user", params={"cursor": cursor}, headers=api.alice
    )

    assert [e["area"] for e in first.json()["entries"]] == ["a-b", "a"]
    assert [e["area"] for e in second.json()["entries"]] == ["b"]
    assert second.json()["next_cursor"] is None
    assert "content" not in first.json()["entries"][0]


async def test_list_area_lists_only_that_area(api: Api) -> None:
    """GET /v1/files/{scope}/{area} stays inside the area."""
    await create(api, "/v1/files/user/note/x")
    await create(api, "/v1/files/user/notes/y")

    response = await api.http.get("/v1/files/user/note", headers=api.alice)

    assert response.status_code == 200
    assert [e["name"] for e in response.json()["entries"]] == ["x"]
    assert response.json()["next_cursor"] is None


async def test_list_with_an_empty_cursor_starts_at_the_beginning(api: Api) -> None:
    """`?cursor=` (empty) means no cursor."""
    await create(api)

    response = await api.http.get(
        "/v1/files/user", params={"cursor": ""}, headers=api.alice
    )

    assert [e["name"] for e in response.json()["entries"]] == ["tea"]


async def test_writes_record_the_token_label_or_the_surface(api: Api) -> None:
    """A labelled token records its label; an unlabelled one records `http`."""
    first = await create(api)

    response = await api.http.post(
        f"{FILE}/lines",
        json={"line": "- [stated] More."},
        headers=api.desktop | if_match(first["version"]),
    )

    assert first["sources"] == ["http"]
    assert response.json()["sources"] == ["claude-desktop", "http"]


async def test_names_are_percent_decoded_unicode(api: Api) -> None:
    """A Unicode name with spaces round-trips through the URL."""
    created = await create(api, "/v1/files/user/notes/gr%C3%BCner%20tee")

    response = await api.http.get(
        "/v1/files/user/notes/gr%C3%BCner%20tee", headers=api.alice
    )

    assert created["name"] == "grüner tee"
    assert response.json()["name"] == "grüner tee"


async def test_health_is_public_and_checks_storage(api: Api) -> None:
    """/health needs no token and reveals no data."""
    await create(api)

    response = await api.http.get("/health")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"storage": "ok"}}


async def test_openapi_is_public_and_declares_bearer_security(api: Api) -> None:
    """The OpenAPI document requires the bearer scheme on the API."""
    response = await api.http.get("/openapi.json")

    assert response.status_code == 200
    document = response.json()
    assert document["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
    }
    assert document["security"] == [{"bearerAuth": []}]
    assert "/v1/files/{scope}/{area}/{name}" in document["paths"]


async def test_docs_serve_swagger_ui(api: Api) -> None:
    """/docs is public HTML for the OpenAPI document."""
    response = await api.http.get("/docs")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "swagger-ui" in response.text


async def test_unknown_route_is_not_found(api: Api) -> None:
    """A path with too many segments matches no route."""
    response = await api.http.get("/v1/files/user/notes/tea/extra", headers=api.alice)

    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"
