"""GET /v1/search: the acceptance cases of search, through the HTTP surface.

Runs on the backend ``WENCHANG_TEST_STORAGE`` selects (memory by default); the
per-backend equality of hits lives in ``tests/test_search_backends.py``.
"""

from pathlib import Path
from typing import Any

import pytest

from tests.http_support import Api, Headers, assert_app_error, file_body, open_api

CAFE = "/v1/files/user/places/Café Crème in Zürich"
FILES: dict[str, tuple[str, str, list[str]]] = {
    CAFE: ("- [stated] Meets Jo here on Fridays.\n", "Where to meet", []),
    "/v1/files/user/notes/oolong": ("- [stated] Likes it.\n", "A tea", []),
    "/v1/files/user/notes/drinks": (
        "- [stated] Drinks oolong daily.\n- [stated] Oolong again.\n",
        "Drinks",
        [],
    ),
    "/v1/files/user/notes/china": ("- [stated] 最喜欢冻顶乌龙。\n", "茶", []),
    "/v1/files/team/notes/plan": ("- [stated] Team oolong order.\n", "Plan", []),
}


async def put(
    api: Api, path: str, content: str, description: str, who: Headers
) -> None:
    body = file_body(content, description)
    response = await api.http.put(path, json=body, headers=who | {"If-None-Match": "*"})
    assert response.status_code == 201, response.text


async def search(api: Api, headers: Headers, **params: Any) -> list[str]:
    response = await api.http.get("/v1/search", params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [f"{h['scope']}/{h['area']}/{h['name']}" for h in response.json()["hits"]]


@pytest.fixture
async def api(tmp_path: Path) -> Any:
    async with open_api(tmp_path, max_file_bytes=4096) as api:
        for path, (content, description, _) in FILES.items():
            who = api.bob if path.startswith("/v1/files/team") else api.alice
            await put(api, path, content, description, who)
        # bob's own user scope: a different entity from alice's.
        await put(api, "/v1/files/user/notes/secret", "oolong bob", "x", api.bob)
        yield api


async def test_a_name_match_ranks_above_content_only_matches(api: Api) -> None:
    found = await search(api, api.alice, q="oolong")
    assert found[0] == "user/notes/oolong"
    assert set(found) == {"user/notes/oolong", "user/notes/drinks", "team/notes/plan"}


async def test_folding_prefixes_and_runs(api: Api) -> None:
    assert await search(api, api.alice, q="cafe creme zurich") == [
        "user/places/Café Crème in Zürich"
    ]
    assert "user/notes/drinks" in await search(api, api.alice, q="oolo")
    assert await search(api, api.alice, q="冻顶") == ["user/notes/china"]


async def test_hits_carry_metadata_and_a_marked_snippet(api: Api) -> None:
    response = await api.http.get(
        "/v1/search", params={"q": "daily oolong"}, headers=api.alice
    )
    (hit,) = response.json()["hits"]
    assert set(hit) == {
        "scope",
        "area",
        "name",
        "description",
        "aliases",
        "version",
        "last_updated",
        "score",
        "snippet",
    }
    assert (
        hit["snippet"]
        == "- [stated] Drinks **oolong** **daily**. - [stated] **Oolong** again."
    )
    assert hit["description"] == "Drinks"
    assert hit["score"] > 0


async def test_another_entity_never_sees_a_hit(api: Api) -> None:
    assert await search(api, api.alice, q="oolong bob") == []
    assert await search(api, api.bob, q="oolong bob") == ["user/notes/secret"]
    assert "user/notes/secret" not in await search(api, api.alice, q="oolong")


@pytest.mark.parametrize(
    "query",
    ['"', "-", "a:b", "NEAR(", "'; DROP TABLE memory_objects; --", "AND OR NOT *"],
)
async def test_syntax_characters_are_searched_as_written(api: Api, query: str) -> None:
    response = await api.http.get("/v1/search", params={"q": query}, headers=api.alice)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("query", ["", "   ", "x" * 257])
async def test_a_blank_or_long_query_is_invalid(api: Api, query: str) -> None:
    response = await api.http.get("/v1/search", params={"q": query}, headers=api.alice)
    assert_app_error(
        response,
        422,
        "INVALID_ARGUMENT",
        error="InvalidArgumentError",
        category="recoverable",
        argument="query",
    )


async def test_narrowing_and_paging(api: Api) -> None:
    assert await search(api, api.alice, q="oolong", scope="team") == ["team/notes/plan"]
    assert await search(api, api.alice, q="meets", scope="user", area="places") == [
        "user/places/Café Crème in Zürich"
    ]
    first = await api.http.get(
        "/v1/search", params={"q": "oolong", "limit": 2}, headers=api.alice
    )
    page = first.json()
    assert len(page["hits"]) == 2 and page["next_cursor"]
    rest = await api.http.get(
        "/v1/search",
        params={"q": "oolong", "limit": 2, "cursor": page["next_cursor"]},
        headers=api.alice,
    )
    names = [h["name"] for h in page["hits"] + rest.json()["hits"]]
    assert len(set(names)) == 3 and rest.json()["next_cursor"] is None
    other = await api.http.get(
        "/v1/search",
        params={"q": "tea", "cursor": page["next_cursor"]},
        headers=api.alice,
    )
    assert other.status_code == 422 and other.json()["details"]["argument"] == "cursor"


async def test_a_deleted_file_is_not_found(api: Api) -> None:
    path = "/v1/files/user/notes/drinks"
    assert "user/notes/drinks" in await search(api, api.alice, q="daily")
    version = (await api.http.get(path, headers=api.alice)).json()["version"]
    deleted = await api.http.delete(
        path, headers=api.alice | {"If-Match": f'"{version}"'}
    )
    assert deleted.status_code == 204

    assert await search(api, api.alice, q="daily") == []
