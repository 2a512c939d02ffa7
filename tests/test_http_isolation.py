"""Two entities in one scope: neither can reach the other's files by any route."""

from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from tests.http_support import (
    FILE,
    Api,
    assert_app_error,
    create,
    file_body,
    if_match,
    open_api,
    state,
)


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as api:
        for name in ["a", "b", "c"]:
            await create(api, f"/v1/files/user/notes/{name}", "- [stated] Alice's.\n")
        yield api


async def test_another_entity_cannot_read_the_file(api: Api) -> None:
    """Bob reading alice's path in the same scope finds nothing of hers."""
    response = await api.http.get("/v1/files/user/notes/a", headers=api.bob)

    assert_app_error(
        response,
        404,
        "MEMORY_NOT_FOUND",
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        scope="user",
        area="notes",
        name="a",
    )
    assert "alice" not in response.text.lower()


async def test_another_entity_lists_only_its_own_files(api: Api) -> None:
    """Bob's scope and area listings are empty though alice has three files."""
    for path in ["/v1/files/user", "/v1/files/user/notes"]:
        response = await api.http.get(path, headers=api.bob)

        assert response.json() == {"entries": [], "next_cursor": None}


async def test_another_entitys_index_holds_none_of_the_files(api: Api) -> None:
    """Bob's index covers his own grants only."""
    await api.http.put(
        FILE, json=file_body("bob's"), headers=api.bob | {"If-None-Match": "*"}
    )

    response = await api.http.get("/v1/index", headers=api.bob)

    assert [entry["name"] for entry in response.json()["entries"]] == ["tea"]
    assert "Alice" not in response.text


async def test_another_entity_cannot_continue_a_listing(api: Api) -> None:
    """Alice's cursor is not valid in bob's listing of the same scope and area."""
    page = await api.http.get("/v1/files/user/notes", headers=api.alice)

    response = await api.http.get(
        "/v1/files/user/notes",
        params={"cursor": page.json()["next_cursor"]},
        headers=api.bob,
    )

    assert response.status_code == 422
    assert response.json()["details"]["argument"] == "cursor"


async def test_another_entity_cannot_change_or_delete_the_file(api: Api) -> None:
    """Bob's writes at alice's version reach his own (missing) file, never hers."""
    before = await state(api)
    version = before[1]["version"]

    for method, suffix, body in [
        ("PUT", "", file_body("bob was here")),
        ("POST", "/lines", {"line": "- [stated] Bob was here."}),
        ("POST", "/replace", {"old_string": "Alice", "new_string": "Bob"}),
        ("DELETE", "", None),
    ]:
        response = await api.http.request(
            method,
            f"/v1/files/user/notes/a{suffix}",
            json=body,
            headers=api.bob | if_match(version),
        )

        assert response.status_code == 404, method
    assert await state(api) == before


async def test_the_same_name_in_two_entities_are_two_files(api: Api) -> None:
    """Bob creating `notes/a` creates his own file beside alice's."""
    response = await api.http.put(
        "/v1/files/user/notes/a",
        json=file_body("bob's own"),
        headers=api.bob | {"If-None-Match": "*"},
    )

    assert response.status_code == 201
    alices = await api.http.get("/v1/files/user/notes/a", headers=api.alice)
    assert alices.json()["content"] == "- [stated] Alice's.\n"
