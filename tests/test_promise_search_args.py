"""What docs/search.md promises about a search's arguments, through GET /v1/search.

``limit`` is 1-50 with a default of 10, ``area`` narrows only within a ``scope``,
a query made only of punctuation has no terms and no hits, ``STRASSE`` finds
``Straße``, and equal scores are ordered by storage key, ascending (code-point
order of ``area/name.md``, so area ``a-b`` comes before area ``a``).
"""

from pathlib import Path
from typing import Any

import pytest

from tests.http_support import Api, assert_app_error, file_body, open_api

SAME = "- [stated] Drinks genmaicha.\n"


async def put(api: Api, area: str, name: str, content: str = SAME) -> None:
    made = await api.http.put(
        f"/v1/files/user/{area}/{name}",
        json=file_body(content, "A note"),
        headers=api.alice | {"If-None-Match": "*"},
    )
    assert made.status_code == 201, made.text


async def search(api: Api, **params: Any) -> dict[str, Any]:
    found = await api.http.get("/v1/search", params=params, headers=api.alice)
    assert found.status_code == 200, found.text
    page: dict[str, Any] = found.json()
    return page


async def assert_refused(api: Api, argument: str, **params: Any) -> None:
    refused = await api.http.get("/v1/search", params=params, headers=api.alice)
    assert_app_error(
        refused,
        422,
        "INVALID_ARGUMENT",
        error="InvalidArgumentError",
        category="recoverable",
        argument=argument,
    )


@pytest.fixture
async def api(tmp_path: Path) -> Any:
    async with open_api(tmp_path, max_file_bytes=4096) as api:
        yield api


async def test_the_default_page_holds_ten_hits(api: Api) -> None:
    for number in range(11):
        await put(api, "notes", f"n{number:02}")

    first = await search(api, q="genmaicha")
    rest = await search(api, q="genmaicha", cursor=first["next_cursor"])

    assert len(first["hits"]) == 10 and first["next_cursor"]
    assert [hit["name"] for hit in rest["hits"]] == ["n10"]
    assert rest["next_cursor"] is None


@pytest.mark.parametrize("limit", [0, 51, -1])
async def test_a_limit_outside_one_to_fifty_is_invalid(api: Api, limit: int) -> None:
    await assert_refused(api, "limit", q="tea", limit=limit)


async def test_fifty_is_the_largest_page(api: Api) -> None:
    await put(api, "notes", "tea")
    assert len((await search(api, q="genmaicha", limit=50))["hits"]) == 1


async def test_an_area_without_a_scope_is_invalid(api: Api) -> None:
    await put(api, "notes", "tea")
    await assert_refused(api, "area", q="genmaicha", area="notes")


async def test_a_query_of_punctuation_only_finds_nothing(api: Api) -> None:
    await put(api, "notes", "punctuation", "- [stated] Uses ... and !!! a lot.\n")
    assert await search(api, q="... !!!") == {"hits": [], "next_cursor": None}
    assert len((await search(api, q="uses ... !!!"))["hits"]) == 1


async def test_strasse_finds_strasse_with_a_sharp_s(api: Api) -> None:
    await put(api, "places", "home", "- [stated] Lives on the Hauptstraße.\n")
    await put(api, "places", "work", "- [stated] Works on the Ring.\n")
    found = await search(api, q="HAUPTSTRASSE")
    assert [hit["name"] for hit in found["hits"]] == ["home"]


async def test_equal_scores_come_in_storage_key_order(api: Api) -> None:
    for area, name in [("a", "x"), ("b", "a"), ("a-b", "y"), ("a", "w")]:
        await put(api, area, name)

    found = await search(api, q="genmaicha", scope="user")

    assert len({hit["score"] for hit in found["hits"]}) == 1
    assert [(hit["area"], hit["name"]) for hit in found["hits"]] == [
        ("a-b", "y"),
        ("a", "w"),
        ("a", "x"),
        ("b", "a"),
    ]
