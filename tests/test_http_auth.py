"""Bearer authentication and the HTTP check order: 401 → 422 → 428 → operation."""

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.http_support import (
    FILE,
    MCP_WRITE,
    Api,
    Headers,
    assert_app_error,
    assert_validation_error,
    create,
    file_body,
    open_api,
    state,
)


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as api:
        yield api


def assert_unauthorized(response: httpx.Response) -> None:
    assert_app_error(
        response,
        401,
        "UNAUTHORIZED",
        error="ResolverFailureError",
        category="permanent",
    )
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


BAD_CREDENTIALS: dict[str, Headers] = {
    "missing": {},
    "wrong-scheme": {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    "empty-bearer": {"Authorization": "Bearer "},
    "unknown-token": {"Authorization": "Bearer wct_not-a-real-token"},
}


ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/v1/index", None),
    ("GET", "/v1/files/user", None),
    ("GET", "/v1/files/user/notes", None),
    ("GET", FILE, None),
    ("PUT", FILE, file_body()),
    ("POST", f"{FILE}/lines", {"line": "- [stated] x"}),
    ("POST", f"{FILE}/replace", {"old_string": "a", "new_string": "b"}),
    ("DELETE", FILE, None),
]


@pytest.mark.parametrize("headers", BAD_CREDENTIALS.values(), ids=BAD_CREDENTIALS)
async def test_every_api_route_without_valid_credentials_is_401(
    api: Api, headers: Headers
) -> None:
    """Reads and writes alike answer 401 with WWW-Authenticate: Bearer."""
    await create(api)
    before = await state(api)
    for method, url, body in ROUTES:
        response = await api.http.request(
            method, url, json=body, headers=headers | {"If-Match": '"1"'}
        )

        assert_unauthorized(response)
    assert await state(api) == before


async def test_an_expired_token_is_401(api: Api) -> None:
    """A token past its expiry no longer resolves."""
    response = await api.http.get("/v1/index", headers=api.expired)

    assert_unauthorized(response)
    assert "expired" in response.json()["message"]


async def test_a_401_reveals_no_identity(api: Api) -> None:
    """The failure names neither entity nor grant of any token."""
    response = await api.http.get(FILE, headers=api.expired)

    assert "alice" not in response.text
    assert "user" not in response.json()["details"]


async def test_authentication_comes_before_request_syntax(api: Api) -> None:
    """Malformed JSON from an unauthenticated caller is 401, not 422."""
    response = await api.http.put(
        FILE, content=b"{not json", headers={"Content-Type": "application/json"}
    )

    assert_unauthorized(response)


async def test_authentication_comes_before_a_malformed_if_match(api: Api) -> None:
    """A weak ETag from an unauthenticated caller is 401, not 422."""
    response = await api.http.delete(FILE, headers={"If-Match": 'W/"1"'})

    assert_unauthorized(response)


async def test_request_syntax_comes_before_a_missing_precondition(api: Api) -> None:
    """A wrong body type without If-Match is a 422 validation error, not a 428."""
    response = await api.http.put(
        FILE, json={"content": 5, "description": "", "aliases": []}, headers=api.alice
    )

    assert_validation_error(response)


async def test_a_missing_precondition_comes_before_the_operation(api: Api) -> None:
    """Without a precondition, even a write to system/ or an ungranted scope is 428."""
    for path in ["/v1/files/user/system/rules", "/v1/files/org/notes/tea"]:
        response = await api.http.put(path, json=file_body(), headers=api.alice)

        assert response.status_code == 428, path


async def test_the_operation_order_applies_after_the_http_checks(api: Api) -> None:
    """With a precondition, the grant is checked before the area and the name."""
    response = await api.http.put(
        "/v1/files/org/Notes/%2e%2e",
        json=file_body(),
        headers=api.alice | {"If-None-Match": "*"},
    )

    assert response.status_code == 422
    assert response.json()["details"]["argument"] == "scope"


@pytest.mark.parametrize("path", ["/health", "/openapi.json", "/docs"])
async def test_public_routes_need_no_token(api: Api, path: str) -> None:
    """Health, OpenAPI and the docs are public."""
    response = await api.http.get(path)

    assert response.status_code == 200


async def test_two_authorization_headers_are_401_on_every_surface(api: Api) -> None:
    """Two tokens in one request are ambiguous: refused before either acts.

    Over MCP the guard charged the first token's window while the tool ran as
    the second; on /v1 the last one silently won."""
    both = [
        ("Authorization", api.bob["Authorization"]),
        ("Authorization", api.alice["Authorization"]),
    ]
    mcp = [
        ("Host", "127.0.0.1:8000"),
        ("Accept", "application/json, text/event-stream"),
    ]
    before = await state(api)

    put = await api.http.put(
        FILE, json=file_body(), headers=[*both, ("If-None-Match", "*")]
    )
    called = await api.http.post("/mcp", json=MCP_WRITE, headers=[*both, *mcp])

    for refused in (put, called):
        assert_unauthorized(refused)
    assert await state(api) == before
