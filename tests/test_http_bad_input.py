"""Rejected requests: each answers its documented error and changes nothing."""

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from tests.http_support import (
    FILE,
    Api,
    assert_app_error,
    assert_validation_error,
    create,
    file_body,
    if_match,
    open_api,
    state,
)

CREATE = {"If-None-Match": "*"}
LOCATION = {"scope": "user", "area": "notes", "name": "tea"}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as api:
        yield api


def invalid(argument: str) -> dict[str, Any]:
    return {
        "error": "InvalidArgumentError",
        "category": "recoverable",
        "argument": argument,
    }


BAD_FILE_BODIES: list[Any] = [
    {"content": 5, "description": "", "aliases": []},
    {"content": "x", "description": None, "aliases": []},
    {"content": "x", "description": "", "aliases": "cha"},
    {"content": "x", "description": "", "aliases": [1]},
    {"content": "x", "description": ""},
    {"content": "x", "description": "", "aliases": [], "sources": ["me"]},
    ["x", "", []],
]


async def test_put_with_a_malformed_body_is_a_validation_error(api: Api) -> None:
    """Wrong types, missing or unknown fields are 422 VALIDATION_ERROR."""
    first = await create(api)
    before = await state(api)

    for body in BAD_FILE_BODIES:
        response = await api.http.put(
            FILE, json=body, headers=api.alice | if_match(first["version"])
        )

        assert_validation_error(response)
    assert await state(api) == before


async def test_put_with_malformed_json_is_a_validation_error(api: Api) -> None:
    """A body that is not JSON is request syntax, 422."""
    response = await api.http.put(
        FILE,
        content=b'{"content": "x",',
        headers=api.alice | CREATE | {"Content-Type": "application/json"},
    )

    assert_validation_error(response)
    assert (await state(api))[0]["entries"] == []


@pytest.mark.parametrize(
    ("suffix", "body"),
    [
        ("lines", {"line": 5}),
        ("lines", {"line": "- [stated] x", "aliases": "cha"}),
        ("lines", {"line": "- [stated] x", "expected_version": "1"}),
        ("replace", {"old_string": "tea"}),
        ("replace", {"old_string": "tea", "new_string": None}),
        ("replace", {"old_string": "tea", "new_string": "x", "extra": 1}),
    ],
)
async def test_post_with_a_malformed_body_is_a_validation_error(
    api: Api, suffix: str, body: dict[str, Any]
) -> None:
    """POST bodies are strict: right types, required fields, nothing unknown."""
    first = await create(api)
    before = await state(api)

    response = await api.http.post(
        f"{FILE}/{suffix}", json=body, headers=api.alice | if_match(first["version"])
    )

    assert_validation_error(response)
    assert await state(api) == before


async def test_an_ungranted_scope_is_invalid_and_names_the_granted_ones(
    api: Api,
) -> None:
    """scope is reported with the caller's available scopes."""
    response = await api.http.put(
        "/v1/files/org/notes/tea", json=file_body(), headers=api.alice | CREATE
    )

    assert_app_error(response, 422, "INVALID_ARGUMENT", **invalid("scope"))
    assert "available scopes: team, user" in response.json()["message"]
    assert (await state(api))[0]["entries"] == []


@pytest.mark.parametrize(
    ("path", "argument"),
    [
        ("/v1/files/user/Notes/tea", "area"),
        ("/v1/files/user/%2e%2e/tea", "area"),
        ("/v1/files/user/no%5Ctes/tea", "area"),
        ("/v1/files/user/notes/%2e%2e", "name"),
        ("/v1/files/user/notes/%2E", "name"),
        ("/v1/files/user/notes/a%0Ab", "name"),
        ("/v1/files/user/notes/a%7Fb", "name"),
        ("/v1/files/user/notes/a%C2%85b", "name"),
        ("/v1/files/user/notes/a%5Cb", "name"),
        ("/v1/files/user/notes/a%E2%80%8Bb", "name"),
        ("/v1/files/user/notes/a%E2%80%A8b", "name"),
    ],
)
async def test_a_malformed_location_is_invalid_for_reads_and_writes(
    api: Api, path: str, argument: str
) -> None:
    """Areas are slugs; names exclude dot names, separators, controls and Cf."""
    await create(api)
    before = await state(api)

    read = await api.http.get(path, headers=api.alice)
    write = await api.http.put(path, json=file_body(), headers=api.alice | CREATE)

    assert_app_error(read, 422, "INVALID_ARGUMENT", **invalid(argument))
    assert_app_error(write, 422, "INVALID_ARGUMENT", **invalid(argument))
    assert await state(api) == before


@pytest.mark.parametrize(
    "path", ["/v1/files/user/Notes", "/v1/files/user/%2e%2e", "/v1/files/user/a%0Ab"]
)
async def test_listing_a_malformed_area_is_invalid(api: Api, path: str) -> None:
    """The area of a listing follows the slug rule too."""
    response = await api.http.get(path, headers=api.alice)

    assert_app_error(response, 422, "INVALID_ARGUMENT", **invalid("area"))


@pytest.mark.parametrize("cursor", ["garbage", "!!!", "bm90ZXMvYS5tZA.AAAA"])
async def test_a_malformed_cursor_is_invalid(api: Api, cursor: str) -> None:
    """A cursor that was not issued for this listing is InvalidArgument(cursor)."""
    await create(api)

    for path in ["/v1/files/user", "/v1/files/user/notes"]:
        response = await api.http.get(
            path, params={"cursor": cursor}, headers=api.alice
        )

        assert_app_error(response, 422, "INVALID_ARGUMENT", **invalid("cursor"))


async def test_an_issued_cursor_spelt_another_way_is_invalid(api: Api) -> None:
    """Only the spelling a page hands out continues it: padded, it is refused."""
    for path in ["user/notes/a", "user/notes/b", "user/notes/c"]:
        await create(api, f"/v1/files/{path}")
    page = await api.http.get("/v1/files/user/notes", headers=api.alice)
    body, _, tag = page.json()["next_cursor"].partition(".")

    url = "/v1/files/user/notes"
    issued = await api.http.get(
        url, params={"cursor": f"{body}.{tag}"}, headers=api.alice
    )
    padded = await api.http.get(
        url, params={"cursor": f"{body}=.{tag}"}, headers=api.alice
    )

    assert issued.status_code == 200, issued.text
    assert_app_error(padded, 422, "INVALID_ARGUMENT", **invalid("cursor"))


async def test_a_cursor_from_another_area_is_invalid(api: Api) -> None:
    """A cursor only continues the listing that issued it."""
    for path in ["user/notes/a", "user/notes/b", "user/notes/c", "user/people/a"]:
        await create(api, f"/v1/files/{path}")
    page = await api.http.get("/v1/files/user/notes", headers=api.alice)

    response = await api.http.get(
        "/v1/files/user/people",
        params={"cursor": page.json()["next_cursor"]},
        headers=api.alice,
    )

    assert_app_error(response, 422, "INVALID_ARGUMENT", **invalid("cursor"))


@pytest.mark.parametrize(
    ("method", "suffix", "body", "size"),
    [
        ("PUT", "", file_body("x" * 65), 65),
        ("PUT", "", file_body("€" * 22), 66),
        ("POST", "/lines", {"line": "- [stated] " + "x" * 60}, 94),
        ("POST", "/replace", {"old_string": "tea", "new_string": "x" * 60}, 79),
    ],
    ids=["put", "put-multibyte", "lines", "replace"],
)
async def test_an_oversize_result_is_413(
    api: Api, method: str, suffix: str, body: dict[str, Any], size: int
) -> None:
    """A result over max_file_bytes (UTF-8 bytes) is 413 OVERSIZE_WRITE, unwritten."""
    first = await create(api)
    before = await state(api)

    response = await api.http.request(
        method,
        f"{FILE}{suffix}",
        json=body,
        headers=api.alice | if_match(first["version"]),
    )

    assert_app_error(
        response,
        413,
        "OVERSIZE_WRITE",
        error="OversizeWriteError",
        category="recoverable",
        size=size,
        limit=64,
        **LOCATION,
    )
    assert await state(api) == before


async def test_an_oversize_create_reports_size_and_limit(api: Api) -> None:
    """The 413 payload carries the byte size (not characters) and the limit."""
    response = await api.http.put(
        FILE, json=file_body("€" * 22), headers=api.alice | CREATE
    )

    assert_app_error(
        response,
        413,
        "OVERSIZE_WRITE",
        error="OversizeWriteError",
        category="recoverable",
        size=66,
        limit=64,
        **LOCATION,
    )
    assert (await state(api))[0]["entries"] == []


@pytest.mark.parametrize(
    ("suffix", "body", "argument"),
    [
        ("lines", {"line": "Likes tea"}, "line"),
        ("lines", {"line": "- [stated] x", "description": "a\nb"}, "description"),
        ("replace", {"old_string": "", "new_string": "x"}, "old_string"),
    ],
)
async def test_a_bad_argument_is_invalid_and_unwritten(
    api: Api, suffix: str, body: dict[str, Any], argument: str
) -> None:
    """Fact lines, one-line descriptions and non-empty old_string are enforced."""
    first = await create(api)
    before = await state(api)

    response = await api.http.post(
        f"{FILE}/{suffix}", json=body, headers=api.alice | if_match(first["version"])
    )

    assert_app_error(response, 422, "INVALID_ARGUMENT", **invalid(argument))
    assert await state(api) == before


async def test_a_multiline_description_on_put_is_invalid(api: Api) -> None:
    """write_file's description is one line too."""
    response = await api.http.put(
        FILE, json=file_body(description="a\r\nb"), headers=api.alice | CREATE
    )

    assert_app_error(response, 422, "INVALID_ARGUMENT", **invalid("description"))


SYSTEM_WRITES: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = [
    ("PUT", "", file_body(), CREATE),
    ("POST", "/lines", {"line": "- [system] x"}, if_match("1")),
    ("POST", "/replace", {"old_string": "x", "new_string": "y"}, if_match("1")),
    ("DELETE", "", None, if_match("1")),
]


@pytest.mark.parametrize(
    ("method", "suffix", "body", "headers"),
    SYSTEM_WRITES,
    ids=["put", "lines", "replace", "delete"],
)
async def test_writing_system_is_403_read_only(
    api: Api,
    method: str,
    suffix: str,
    body: dict[str, Any] | None,
    headers: dict[str, str],
) -> None:
    """system/ is curated and never writable over HTTP."""
    response = await api.http.request(
        method,
        f"/v1/files/user/system/rules{suffix}",
        json=body,
        headers=api.alice | headers,
    )

    assert_app_error(
        response,
        403,
        "RESTRICTED_SCOPE",
        error="RestrictedScopeError",
        category="permanent",
        reason="system_read_only",
        scope="user",
        area="system",
        name="rules",
    )


async def test_writing_a_role_gated_scope_without_the_role_is_403(api: Api) -> None:
    """A member is refused where only owners and admins write; roles are sorted."""
    response = await api.http.put(
        "/v1/files/team/notes/tea", json=file_body(), headers=api.alice | CREATE
    )

    assert_app_error(
        response,
        403,
        "RESTRICTED_SCOPE",
        error="RestrictedScopeError",
        category="permanent",
        reason="role_required",
        required_roles=["admin", "owner"],
        scope="team",
        area="notes",
        name="tea",
    )


async def test_reading_a_role_gated_scope_needs_no_role(api: Api) -> None:
    """Bob (admin) writes the team file; alice (member) reads it."""
    await api.http.put(
        "/v1/files/team/notes/tea", json=file_body("shared"), headers=api.bob | CREATE
    )

    response = await api.http.get("/v1/files/team/notes/tea", headers=api.alice)

    assert response.status_code == 200
    assert response.json()["content"] == "shared"


async def test_a_replace_without_a_unique_match_is_409(api: Api) -> None:
    """Zero matches at the current version carry content, version and match_count."""
    first = await create(api)
    before = await state(api)

    response = await api.http.post(
        f"{FILE}/replace",
        json={"old_string": "coffee", "new_string": "x"},
        headers=api.alice | if_match(first["version"]),
    )

    assert_app_error(
        response,
        409,
        "REPLACE_FACT_MATCH",
        error="ReplaceFactMatchError",
        category="recoverable",
        content=first["content"],
        version=first["version"],
        match_count=0,
        **LOCATION,
    )
    assert await state(api) == before


async def test_a_create_beyond_the_file_cap_is_409(tmp_path: Path) -> None:
    """At max_files_per_entity the create is refused with the limit."""
    async with open_api(tmp_path, max_files_per_entity=1) as api:
        await create(api, "/v1/files/user/notes/first")
        before = await state(api)

        response = await api.http.put(
            FILE, json=file_body(), headers=api.alice | CREATE
        )

        assert_app_error(
            response,
            409,
            "FILE_QUOTA_EXCEEDED",
            error="FileQuotaExceededError",
            category="recoverable",
            limit=1,
            **LOCATION,
        )
        assert await state(api) == before
