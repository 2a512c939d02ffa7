"""Every refusal the server can send, over HTTP and MCP, has one envelope.

``code``, ``message``, ``details`` (``error``, ``category``, ``message`` and the
fields to recover) and ``request_id`` (also the ``x-request-id`` header): for the
memory errors, Tenchi's own refusals, the guards in front of the API and of
``/mcp``, and the MCP transport's Host and Origin checks. A failed MCP tool call
carries the same ``code``, ``message`` and ``details`` in its error, and the
request id in ``details.request_id`` and in the result's ``_meta``.
"""

import asyncio
import fcntl
import json
import os
import re
import socket
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from starlette.datastructures import Headers

from app.features.memory.tools import history_tools, tools
from app.server.http.error_envelope import envelope
from app.shared.errors import GUIDANCE, Category
from tests.http_support import FILE, Api, create, file_body, if_match, open_api

README = Path(__file__).parent.parent / "README.md"
# A row of the README's errors table: code, status, the header it adds, category.
README_ROW = re.compile(
    r"^\| `([A-Z_]+)` \| (\d{3})(?: \(\+ `([A-Za-z-]+)`\))? \| ([a-z]+) \|",
    re.MULTILINE,
)
DOCUMENTED = {
    code: (int(status), header, category)
    for code, status, header, category in README_ROW.findall(README.read_text())
}
NEW = {"If-None-Match": "*"}
Action = Callable[[Api, Path], Awaitable[httpx.Response]]


@dataclass(frozen=True)
class Case:
    code: str
    status: int
    action: Action
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    fields: tuple[str, ...] = ()


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def held_lock(root: Path) -> Generator[None]:
    """Hold the filesystem adapter's lock, so every storage call waits."""
    root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)


async def conflict(api: Api, _: Path) -> httpx.Response:
    await create(api)
    return await api.http.put(FILE, json=file_body(), headers=api.alice | if_match("0"))


async def oversize(api: Api, _: Path) -> httpx.Response:
    return await api.http.put(FILE, json=file_body("x" * 100), headers=api.alice | NEW)


async def over_quota(api: Api, _: Path) -> httpx.Response:
    await create(api)
    return await api.http.put(f"{FILE}2", json=file_body(), headers=api.alice | NEW)


async def no_match(api: Api, _: Path) -> httpx.Response:
    created = await create(api)
    body = {"old_string": "absent", "new_string": "x"}
    return await api.http.post(
        f"{FILE}/replace", json=body, headers=api.alice | if_match(created["version"])
    )


async def bad_area(api: Api, _: Path) -> httpx.Response:
    return await api.http.get("/v1/files/user/Bad_Area/tea", headers=api.alice)


async def absent(api: Api, _: Path) -> httpx.Response:
    return await api.http.get(FILE, headers=api.alice)


async def restricted(api: Api, _: Path) -> httpx.Response:
    return await api.http.put(
        "/v1/files/user/system/tea", json=file_body(), headers=api.alice | NEW
    )


async def anonymous(api: Api, _: Path) -> httpx.Response:
    return await api.http.get("/v1/index")


async def cache_down(api: Api, _: Path) -> httpx.Response:
    return await api.http.get("/v1/index", headers=api.alice)


async def no_precondition(api: Api, _: Path) -> httpx.Response:
    return await api.http.put(FILE, json=file_body(), headers=api.alice)


async def spent(api: Api, _: Path) -> httpx.Response:
    await api.http.get("/v1/index", headers=api.alice)
    return await api.http.get("/v1/index", headers=api.alice)


async def reused_key(api: Api, _: Path) -> httpx.Response:
    keyed = api.alice | NEW | {"Idempotency-Key": "k"}
    await api.http.put(FILE, json=file_body(), headers=keyed)
    return await api.http.put(FILE, json=file_body("other\n"), headers=keyed)


async def key_in_flight(api: Api, tmp_path: Path) -> httpx.Response:
    keyed = api.alice | NEW | {"Idempotency-Key": "k"}
    with held_lock(tmp_path / "files"):
        first = asyncio.create_task(api.http.put(FILE, json=file_body(), headers=keyed))
        for _ in range(50):
            await asyncio.sleep(0.01)
        second = await api.http.put(FILE, json=file_body(), headers=keyed)
    await first
    return second


async def too_large(api: Api, _: Path) -> httpx.Response:
    json_body = {"content-type": "application/json"}
    return await api.http.put(
        FILE, content=b"x" * 2048, headers=api.alice | NEW | json_body
    )


async def too_large_mcp(api: Api, _: Path) -> httpx.Response:
    return await api.http.post("/mcp", content=b"x" * 2048, headers=api.alice)


async def anonymous_mcp(api: Api, _: Path) -> httpx.Response:
    return await api.http.post("/mcp", json={})


async def malformed(api: Api, _: Path) -> httpx.Response:
    return await api.http.put(FILE, json={"content": 1}, headers=api.alice | NEW)


async def no_route(api: Api, _: Path) -> httpx.Response:
    return await api.http.get("/v2/anything", headers=api.alice)


async def wrong_method(api: Api, _: Path) -> httpx.Response:
    return await api.http.post("/v1/index", headers=api.alice)


async def wrong_media(api: Api, _: Path) -> httpx.Response:
    text = {"content-type": "text/plain"}
    return await api.http.put(FILE, content=b"x", headers=api.alice | NEW | text)


async def no_audit_log(api: Api, _: Path) -> httpx.Response:
    return await api.http.get("/v1/audit", headers=api.alice)


async def foreign_host(api: Api, _: Path) -> httpx.Response:
    return await api.http.post("/mcp", json={}, headers=api.alice | {"host": "evil"})


async def foreign_origin(api: Api, _: Path) -> httpx.Response:
    origin = {"host": "127.0.0.1:8000", "origin": "http://evil.example"}
    return await api.http.post("/mcp", json={}, headers=api.alice | origin)


CASES = [
    Case("VERSION_CONFLICT", 412, conflict, fields=("content", "version")),
    Case("OVERSIZE_WRITE", 413, oversize, fields=("size", "limit")),
    Case(
        "FILE_QUOTA_EXCEEDED",
        409,
        over_quota,
        {"max_files_per_entity": 1},
        ("limit",),
    ),
    Case("REPLACE_FACT_MATCH", 409, no_match, fields=("content", "match_count")),
    Case("INVALID_ARGUMENT", 422, bad_area, fields=("argument",)),
    Case("MEMORY_NOT_FOUND", 404, absent, fields=("reason",)),
    Case("RESTRICTED_SCOPE", 403, restricted, fields=("reason",)),
    Case("UNAUTHORIZED", 401, anonymous),
    Case("UNAUTHORIZED", 401, anonymous_mcp),
    Case(
        "BACKEND_UNAVAILABLE",
        503,
        cache_down,
        {"index_cache": f"redis://127.0.0.1:{dead_port()}/0"},
        ("reason",),
    ),
    Case("PRECONDITION_REQUIRED", 428, no_precondition),
    Case("RATE_LIMITED", 429, spent, {"rate_limit": 1}, ("retry_after",)),
    Case("IDEMPOTENCY_CONFLICT", 409, reused_key),
    Case(
        "IDEMPOTENCY_IN_PROGRESS",
        409,
        key_in_flight,
        {"storage": "file://{tmp}/files"},
        ("retry_after",),
    ),
    Case("REQUEST_TOO_LARGE", 413, too_large, {"max_request_bytes": 1024}, ("limit",)),
    Case(
        "REQUEST_TOO_LARGE",
        413,
        too_large_mcp,
        {"max_request_bytes": 1024},
        ("limit",),
    ),
    Case("VALIDATION_ERROR", 422, malformed, fields=("errors",)),
    Case("NOT_FOUND", 404, no_route),
    Case("METHOD_NOT_ALLOWED", 405, wrong_method),
    Case("UNSUPPORTED_MEDIA_TYPE", 415, wrong_media, fields=("expected", "actual")),
    Case("AUDIT_UNAVAILABLE", 501, no_audit_log, {"audit": "stdout"}, ("store",)),
    Case("AUDIT_UNAVAILABLE", 501, no_audit_log, {"audit": "none"}, ("store",)),
    Case("HOST_NOT_ALLOWED", 421, foreign_host),
    Case("ORIGIN_NOT_ALLOWED", 403, foreign_origin),
]


def assert_envelope(response: httpx.Response, case: Case) -> None:
    body = response.json()
    details = body["details"]

    assert response.status_code == case.status, response.text
    assert set(body) == {"code", "message", "details", "request_id"}
    assert body["code"] == case.code
    assert body["request_id"] == response.headers["x-request-id"]
    assert re.fullmatch(r"[A-Z][A-Za-z]*Error", details["error"])
    assert details["message"] == body["message"]
    assert body["message"].endswith(GUIDANCE[Category(details["category"])])
    assert set(case.fields) <= set(details), details


def assert_documented(response: httpx.Response, code: str) -> None:
    """Status, category and added header as the README's errors table says."""
    status, header, category = DOCUMENTED[code]
    assert (response.status_code, response.json()["details"]["category"]) == (
        status,
        category,
    )
    assert not header or header in response.headers, (header, response.headers)


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.code}-{case.status}")
async def test_every_refusal_has_the_envelope(case: Case, tmp_path: Path) -> None:
    """The refusal carries code, message, details with a category, and request_id."""
    settings: dict[str, Any] = {"rate_limit": 0}
    settings |= {
        key: value.format(tmp=tmp_path) if isinstance(value, str) else value
        for key, value in case.settings.items()
    }
    async with open_api(tmp_path, **settings) as api:
        response = await case.action(api, tmp_path)

    assert_envelope(response, case)
    assert_documented(response, case.code)


def test_the_categories_tell_transient_from_permanent() -> None:
    """Retrying helps a spent window or a key in flight, never a body over the cap."""
    categories = {
        code: envelope(status, {"code": code, "message": ""}, "", Headers())["details"][
            "category"
        ]
        for code, status in (
            ("RATE_LIMITED", 429),
            ("IDEMPOTENCY_IN_PROGRESS", 409),
            ("REQUEST_TOO_LARGE", 413),
            ("IDEMPOTENCY_CONFLICT", 409),
        )
    }

    assert categories == {
        "RATE_LIMITED": "transient",
        "IDEMPOTENCY_IN_PROGRESS": "transient",
        "REQUEST_TOO_LARGE": "permanent",
        "IDEMPOTENCY_CONFLICT": "permanent",
    }


def test_the_walk_covers_every_code_of_the_readme_errors_table() -> None:
    """A code added to the README's errors table must be walked above."""
    table = re.findall(r"^\| `([A-Z_]+)` \| \d{3}", README.read_text(), re.MULTILINE)

    assert table and set(table) == set(DOCUMENTED)
    assert set(table) <= {case.code for case in CASES}


async def test_a_caller_request_id_names_the_refusal(tmp_path: Path) -> None:
    """An inbound x-request-id comes back in the body of a guard's refusal."""
    async with open_api(tmp_path, max_request_bytes=1024) as api:
        response = await api.http.post(
            "/mcp", content=b"x" * 2048, headers=api.alice | {"x-request-id": "abc-1"}
        )

    assert response.json()["request_id"] == "abc-1"


TEA: dict[str, Any] = {"scope": "user", "area": "notes", "name": "tea"}
NEW_FILE: dict[str, Any] = {
    "description": "Drinks",
    "aliases": [],
    "expected_version": None,
}
Arguments = Callable[[Api], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ToolCase:
    code: str
    tool: str
    arguments: Arguments
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    fields: tuple[str, ...] = ()


def given(arguments: dict[str, Any]) -> Arguments:
    async def fixed(_: Api) -> dict[str, Any]:
        return arguments

    return fixed


async def stale_write(api: Api) -> dict[str, Any]:
    await create(api)
    return TEA | NEW_FILE | {"content": "- [stated] x\n", "expected_version": "0"}


async def second_file(api: Api) -> dict[str, Any]:
    await create(api)
    return TEA | NEW_FILE | {"name": "tea2", "content": "- [stated] x\n"}


async def absent_fact(api: Api) -> dict[str, Any]:
    created = await create(api)
    return TEA | {
        "old_string": "absent",
        "new_string": "x",
        "expected_version": created["version"],
    }


TOOL_CASES = [
    ToolCase(
        "VERSION_CONFLICT", "write_file", stale_write, fields=("content", "version")
    ),
    ToolCase(
        "OVERSIZE_WRITE",
        "write_file",
        given(TEA | NEW_FILE | {"content": "x" * 100}),
        fields=("size", "limit"),
    ),
    ToolCase(
        "FILE_QUOTA_EXCEEDED",
        "write_file",
        second_file,
        {"max_files_per_entity": 1},
        ("limit",),
    ),
    ToolCase(
        "REPLACE_FACT_MATCH",
        "replace_fact",
        absent_fact,
        fields=("content", "match_count"),
    ),
    ToolCase(
        "INVALID_ARGUMENT",
        "read_file",
        given(TEA | {"area": "Bad_Area"}),
        fields=("argument",),
    ),
    ToolCase("MEMORY_NOT_FOUND", "read_file", given(TEA), fields=("reason",)),
    ToolCase(
        "RESTRICTED_SCOPE",
        "write_file",
        given(TEA | NEW_FILE | {"area": "system", "content": "x\n"}),
        fields=("reason",),
    ),
    ToolCase(
        "BACKEND_UNAVAILABLE",
        "get_memory_index",
        given({}),
        {"index_cache": f"redis://127.0.0.1:{dead_port()}/0"},
        ("reason",),
    ),
    ToolCase("invalid_input", "read_file", given(TEA | {"scope": 1})),
    ToolCase(
        "approval_required",
        "delete_file",
        given(TEA | {"expected_version": "0"}),
        {"require_approval": ["delete_file"]},
    ),
]


async def call_tool(
    api: Api, tool: str, arguments: dict[str, Any], **headers: str
) -> httpx.Response:
    """One tools/call over plain HTTP, as a handshake-era stateless client sends it."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    accept = {"accept": "application/json, text/event-stream", "host": "127.0.0.1:8000"}
    return await api.http.post(
        "/mcp", json=message, headers=api.alice | accept | headers
    )


def assert_tool_envelope(response: httpx.Response, case: ToolCase) -> None:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    request_id = response.headers["x-request-id"]
    payload = result["structuredContent"]
    error = payload["error"]

    assert result["isError"] is True
    assert result["_meta"]["request_id"] == request_id
    assert json.loads(result["content"][0]["text"]) == payload
    if case.code.islower():
        # Tenchi's own failure kinds: its published schema allows kind and message.
        assert set(error) == {"kind", "message"} and error["kind"] == case.code
        return
    details = error["details"]
    assert (error["kind"], error["code"]) == ("application_error", case.code)
    assert details["request_id"] == request_id
    assert re.fullmatch(r"[A-Z][A-Za-z]*Error", details["error"])
    assert details["message"] == error["message"]
    assert error["message"].endswith(GUIDANCE[Category(details["category"])])
    assert set(case.fields) <= set(details), details


@pytest.mark.parametrize("case", TOOL_CASES, ids=lambda case: f"mcp-{case.code}")
async def test_every_tool_failure_has_the_envelope(
    case: ToolCase, tmp_path: Path
) -> None:
    """A failed tool call carries code, message, details and the request id."""
    async with open_api(tmp_path, rate_limit=0, **case.settings) as api:
        response = await call_tool(api, case.tool, await case.arguments(api))
        schema = await output_schema(api, case.tool)

    assert_tool_envelope(response, case)
    structured = response.json()["result"]["structuredContent"]
    Draft202012Validator(schema).validate(structured)  # pyright: ignore[reportUnknownMemberType]


async def output_schema(api: Api, tool: str) -> dict[str, Any]:
    """The output schema `tools/list` publishes for `tool`."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    headers = {"accept": "application/json", "host": "127.0.0.1:8000"}
    listed = await api.http.post("/mcp", json=message, headers=api.alice | headers)
    [found] = [t for t in listed.json()["result"]["tools"] if t["name"] == tool]
    schema: dict[str, Any] = found["outputSchema"]
    return schema


def test_the_tool_walk_covers_every_memory_error_an_agent_can_meet() -> None:
    """Every error a listed tool declares is walked over MCP (UNAUTHORIZED is a 401)."""
    groups = (tools, history_tools)
    declared = {
        e.code for group in groups for binding in group for e in binding.tool.errors
    }

    assert declared - {"UNAUTHORIZED"} <= {case.code for case in TOOL_CASES}


async def test_a_caller_request_id_names_the_tool_failure(tmp_path: Path) -> None:
    """An inbound x-request-id names a failed tool call, as it names a refusal."""
    async with open_api(tmp_path) as api:
        response = await call_tool(api, "read_file", TEA, **{"x-request-id": "abc-2"})

    result = response.json()["result"]
    assert result["_meta"]["request_id"] == "abc-2"
    assert result["structuredContent"]["error"]["details"]["request_id"] == "abc-2"
