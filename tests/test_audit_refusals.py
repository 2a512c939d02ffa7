"""Requests refused before their operation ran are audit events too.

A body that fails the contract (422 VALIDATION_ERROR), one over the size
ceiling (413 REQUEST_TOO_LARGE), one of the wrong media type (415) and a spent
rate limit (429 RATE_LIMITED) are each one event of the route's operation, with
the token that sent it and the location its path names. A request whose token
does not resolve (401) is no event: it is nobody's call.
"""

import json
import sqlite3
from pathlib import Path
from typing import Any

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
