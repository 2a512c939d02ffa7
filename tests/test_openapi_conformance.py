"""The check that stands in for Tenchi's per-response re-check can fail.

``tests/support/openapi_conformance.py`` validates every response of the HTTP
suites against ``openapi.json`` (the app passes its bodies through unchecked).
These feed it drifted exchanges, directly and through a real httpx call to an
app that drifts, and a conforming one that must pass.
"""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.http_support import FILE, create, open_api
from tests.support.openapi_conformance import DRIFTS, Exchange, published

FILE_BODY: dict[str, Any] = {
    "scope": "user",
    "area": "notes",
    "name": "tea",
    "content": "- [stated] Likes tea.\n",
    "version": "v1",
    "description": "Drinks",
    "aliases": [],
    "sources": ["http"],
    "last_updated": "2026-12-01T00:00:00Z",
}
JSON = {"content-type": "application/json", "etag": '"v1"'}


def read(status: int, body: object, **headers: str) -> Exchange:
    return Exchange("GET", FILE, status, JSON | headers, json.dumps(body).encode())


def test_a_file_as_published_conforms() -> None:
    assert published().drift(read(200, FILE_BODY)) == []


def test_a_missing_field_is_drift() -> None:
    drifted = {k: v for k, v in FILE_BODY.items() if k != "version"}
    assert published().drift(read(200, drifted)) == [
        "body at /: 'version' is a required property"
    ]


def test_a_field_of_another_type_is_drift() -> None:
    problems = published().drift(read(200, FILE_BODY | {"aliases": "tea"}))
    assert problems == ["body at /aliases: 'tea' is not of type 'array'"]


def test_a_missing_declared_header_is_drift() -> None:
    exchange = Exchange(
        "GET",
        FILE,
        200,
        {"content-type": "application/json"},
        json.dumps(FILE_BODY).encode(),
    )
    assert published().drift(exchange) == ["required header ETag is missing"]


def test_an_undeclared_status_is_drift() -> None:
    (problem,) = published().drift(read(409, FILE_BODY))
    assert problem.startswith("status 409 is not declared")


def test_an_error_outside_its_envelope_is_drift() -> None:
    exchange = read(404, {"error": "gone"}, **{"x-tenchi-error-source": "app"})
    assert "body at /: 'code' is a required property" in published().drift(exchange)


def test_an_error_with_another_code_than_declared_is_drift() -> None:
    envelope: dict[str, object] = {"code": "VERSION_CONFLICT", "message": "m"}
    exchange = read(404, envelope, **{"x-tenchi-error-source": "app"})
    assert any("/code" in problem for problem in published().drift(exchange))


def test_a_body_where_none_is_declared_is_drift() -> None:
    exchange = Exchange("GET", "/v1/index", 304, {"etag": '"i"'}, b"{}")
    assert published().drift(exchange) == [
        "a body was sent where none is declared: b'{}'"
    ]


def test_paths_outside_the_document_are_not_checked() -> None:
    assert published().drift(Exchange("GET", "/ui/", 418, {}, b"teapot")) == []


async def drifting_read(request: Request) -> Response:
    return JSONResponse({"scope": "user"}, headers={"ETag": '"v1"'})


@pytest.mark.openapi_drift
async def test_the_suite_hook_records_a_drifted_response() -> None:
    """Every httpx response of a test goes through the check (the conftest hook)."""
    app = Starlette(routes=[Route(FILE, drifting_read)])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        await http.get(FILE)
    assert len(DRIFTS) == 1
    assert "'version' is a required property" in DRIFTS[0]
    DRIFTS.clear()


async def test_the_app_serves_what_it_publishes(tmp_path: Path) -> None:
    """The passed-through bodies of the real app conform, ETag included."""
    async with open_api(tmp_path) as api:
        created = await create(api)
        response = await api.http.get(FILE, headers=api.alice)
    assert response.json() == created
    assert response.headers["etag"] == f'"{created["version"]}"'
    assert DRIFTS == []
