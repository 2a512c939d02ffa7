"""Requests refused before their operation ran are audit events too.

A body that fails the contract (422 VALIDATION_ERROR), one over the size
ceiling (413 REQUEST_TOO_LARGE), one of the wrong media type (415) and a spent
rate limit (429 RATE_LIMITED) are each one event of the route's operation, with
the token that sent it and the location its path names. A request whose token
does not resolve (401) is no event: it is nobody's call. An MCP message refused
for a spent rate limit is one event per tool call it holds, as on /v1.
"""

import json
import sqlite3
from pathlib import Path
from typing import Any

from app.server.mcp.calls import call_arguments
from app.server.mcp.refusal_audit import tool_calls
from tests.support.audited_app import Audited, open_audited

FILE = "/v1/files/user/notes/tea"


async def own_events(api: Audited) -> list[dict[str, Any]]:
    """Alice's events, read with the ``both`` token (same entity, own limit)."""
    answer = await api.http.get("/v1/audit", headers=api.both.headers)
    assert answer.status_code == 200, answer.text
    return [e for e in answer.json()["events"] if e["operation"] != "read_audit"]


def fields(event: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("surface", "actor", "token_id", "operation", "scope", "area", "name")
    return (*(event[k] for k in keys), event["outcome"], event["version"])


async def test_a_body_that_fails_the_contract_is_a_refused_event(
    tmp_path: Path,
) -> None:
    async with open_audited(tmp_path) as api:
        incomplete = await api.http.put(
            FILE,
            json={"content": "- [stated] x\n"},
            headers=api.alice.headers | {"If-None-Match": "*"},
        )
        seen = await own_events(api)

    assert (incomplete.status_code, incomplete.json()["code"]) == (
        422,
        "VALIDATION_ERROR",
    )
    assert [fields(e) for e in seen] == [
        (
            "http",
            "claude",
            api.alice.token_id,
            "write_file",
            "user",
            "notes",
            "tea",
            "VALIDATION_ERROR",
            None,
        )
    ]
    assert seen[0]["request_id"] == incomplete.headers["x-request-id"]


async def test_a_body_too_large_and_a_wrong_media_type_are_refused_events(
    tmp_path: Path,
) -> None:
    async with open_audited(tmp_path, max_request_bytes=1024) as api:
        headers = api.alice.headers | {"If-Match": '"v1"'}
        large = await api.http.post(
            f"{FILE}/lines", json={"line": "- [stated] " + "x" * 2000}, headers=headers
        )
        typed = await api.http.post(
            f"{FILE}/lines",
            content=b"line",
            headers=headers | {"Content-Type": "text/plain"},
        )
        seen = await own_events(api)

    assert (large.status_code, typed.status_code) == (413, 415)
    assert [(e["operation"], e["area"], e["outcome"]) for e in reversed(seen)] == [
        ("append_line", "notes", "REQUEST_TOO_LARGE"),
        ("append_line", "notes", "UNSUPPORTED_MEDIA_TYPE"),
    ]


async def test_a_spent_rate_limit_is_a_refused_event(tmp_path: Path) -> None:
    async with open_audited(tmp_path, rate_limit=2) as api:
        answers = [
            await api.http.get(FILE, headers=api.alice.headers) for _ in range(3)
        ]
        seen = await own_events(api)

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [(e["operation"], e["name"], e["outcome"]) for e in reversed(seen)] == [
        ("read_file", "tea", "ok"),
        ("read_file", "tea", "ok"),
        ("read_file", "tea", "RATE_LIMITED"),
    ]
    assert seen[0]["token_id"] == api.alice.token_id


async def test_a_request_without_a_valid_token_is_no_event(tmp_path: Path) -> None:
    async with open_audited(tmp_path) as api:
        unknown = await api.http.get(FILE, headers={"Authorization": "Bearer nope"})
        missing = await api.http.put(FILE, json={})
    connection = sqlite3.connect(tmp_path / "wenchang.db")
    try:
        rows = connection.execute("SELECT record FROM audit_events").fetchall()
    finally:
        connection.close()

    assert (unknown.status_code, missing.status_code) == (401, 401)
    assert [json.loads(row[0]) for row in rows] == []


def tool_call(name: str, arguments: dict[str, Any], id: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def test_an_mcp_call_over_its_rate_limit_is_a_refused_event(
    tmp_path: Path,
) -> None:
    """A 429 on /mcp names the tool in its message: one event, as on /v1."""
    where = {"scope": "user", "area": "notes", "name": "tea"}
    headers = {
        "accept": "application/json, text/event-stream",
        "host": "127.0.0.1:8000",
    }
    async with open_audited(tmp_path, rate_limit=2) as api:
        api_headers = api.alice.headers | headers
        answers = [
            await api.http.post(
                "/mcp", json=tool_call("read_file", where), headers=api_headers
            )
            for _ in range(3)
        ]
        listed = await api.http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers=api_headers,
        )
        seen = await own_events(api)

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert listed.status_code == 429
    assert [
        (e["surface"], e["operation"], e["name"], e["outcome"]) for e in reversed(seen)
    ] == [
        ("mcp", "read_file", "tea", "ok"),
        ("mcp", "read_file", "tea", "ok"),
        ("mcp", "read_file", "tea", "RATE_LIMITED"),
    ]
    assert seen[0]["token_id"] == api.alice.token_id
    assert seen[0]["request_id"] == answers[2].headers["x-request-id"]


async def test_an_mcp_argument_utf8_cannot_carry_leaves_the_log_working(
    tmp_path: Path,
) -> None:
    """A lone surrogate (JSON "\\ud800") as the scope of a refused call names
    no scope; the event is kept, and the log keeps recording and answering
    (the unwritable event used to stall it: GET /v1/audit was a 500)."""
    headers = {
        "accept": "application/json, text/event-stream",
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
    }
    where = {"scope": "\ud800", "area": "notes", "name": "tea"}
    async with open_audited(tmp_path) as api:
        refused = await api.http.post(
            "/mcp",
            content=json.dumps(tool_call("read_file", where)),  # ASCII escapes
            headers=api.both.headers | headers,
        )
        read = await api.http.get(FILE, headers=api.both.headers)
        seen = await own_events(api)

    assert refused.status_code == 200
    assert read.status_code == 200
    refusals = [e for e in seen if e["outcome"] == "VALIDATION_ERROR"]
    assert sorted((e["operation"], e["scope"], e["area"]) for e in refusals) == [
        ("read_file", "team", "notes"),  # no scope named: each granted one
        ("read_file", "user", "notes"),
    ]
    assert (seen[0]["operation"], seen[0]["outcome"]) == ("read_file", "ok")


def test_the_tool_calls_of_a_refused_message_are_read_from_its_json() -> None:
    read = tool_call("read_file", {"scope": "user"})
    batch = json.dumps([read, {"jsonrpc": "2.0", "method": "ping", "id": 3}])
    assert tool_calls(json.dumps(read).encode()) == [("read_file", {"scope": "user"})]
    assert tool_calls(batch.encode()) == [("read_file", {"scope": "user"})]
    assert tool_calls(b"{not json") == []
    assert tool_calls(b'{"method": "tools/call", "params": {"name": 5}}') == []
    assert tool_calls(b'{"method": "tools/call", "params": {"name": "x"}}') == [
        ("x", {})
    ]


def test_records_take_a_calls_arguments_only_when_they_are_an_object() -> None:
    assert call_arguments({"name": "x", "arguments": {"scope": "user"}}) == {
        "scope": "user"
    }
    for params in ({"name": "x"}, {"arguments": ["user"]}, {"arguments": None}):
        assert call_arguments(params) == {}
    body = b'{"method": "tools/call", "params": {"name": "x", "arguments": [1]}}'
    assert tool_calls(body) == [("x", {})]
