"""Reading the audit log over HTTP (docs/audit.md, "Reading the log").

``GET /v1/audit`` pages 100 events at a time, newest first; ``operation``,
``area`` + ``name`` and the inclusive ``since`` / ``until`` reach the store
through the query string; a cursor is bound to the filters it was issued with;
``WENCHANG_AUDIT_ROLES`` names the roles that may read.
"""

from pathlib import Path
from typing import Any

from app.server.tasks import build_task_runner
from tests.http_support import file_body
from tests.support.audited_app import Audited, open_audited

TEA = "/v1/files/user/notes/tea"
GREEN = "/v1/files/user/notes/green"


async def audit(api: Audited, **params: str) -> dict[str, Any]:
    answer = await api.http.get("/v1/audit", params=params, headers=api.alice.headers)
    assert answer.status_code == 200, answer.text
    page: dict[str, Any] = answer.json()
    return page


async def test_a_page_holds_100_events_and_the_cursor_brings_the_rest(
    tmp_path: Path,
) -> None:
    async with open_audited(tmp_path) as api:
        for _ in range(101):
            read = await api.http.get(TEA, headers=api.alice.headers)
            assert read.status_code == 200

        first = await audit(api)
        rest = await audit(api, cursor=first["next_cursor"])
        other_filter = await api.http.get(
            "/v1/audit",
            params={"cursor": first["next_cursor"], "operation": "read_file"},
            headers=api.alice.headers,
        )

    assert len(first["events"]) == 100 and first["next_cursor"]
    assert [e["operation"] for e in rest["events"]] == ["read_file"]
    assert rest["next_cursor"] is None
    times = [e["at"] for e in first["events"] + rest["events"]]
    assert times == sorted(times, reverse=True)
    assert other_filter.status_code == 422, other_filter.text
    assert other_filter.json()["details"]["argument"] == "cursor"


async def calls(api: Audited) -> None:
    """write green, read tea, append to green, read tea again, list notes."""
    alice = api.alice.headers
    body = file_body("- [stated] green\n", "d")
    made = await api.http.put(GREEN, json=body, headers=alice | {"If-None-Match": "*"})
    assert made.status_code == 201, made.text
    assert (await api.http.get(TEA, headers=alice)).status_code == 200
    appended = await api.http.post(
        f"{GREEN}/lines",
        json={"line": "- [stated] more"},
        headers=alice | {"If-Match": made.headers["ETag"]},
    )
    assert appended.status_code == 200, appended.text
    assert (await api.http.get(TEA, headers=alice)).status_code == 200
    assert (
        await api.http.get("/v1/files/user/notes", headers=alice)
    ).status_code == 200


async def test_filters_reach_the_log_from_the_query_string(tmp_path: Path) -> None:
    async with open_audited(tmp_path) as api:
        await calls(api)
        every = (await audit(api, scope="user"))["events"]
        reads = await audit(api, operation="read_file")
        trail = await audit(api, area="notes", name="green")
        middle = every[1:4]  # read, append, read: newest first
        window = await audit(api, since=middle[-1]["at"], until=middle[0]["at"])
        instant = await audit(api, since=middle[1]["at"], until=middle[1]["at"])

    assert [e["operation"] for e in every] == [
        "list_prefix",
        "read_file",
        "append_line",
        "read_file",
        "write_file",
    ]
    assert [e["operation"] for e in reads["events"]] == ["read_file", "read_file"]
    assert [(e["operation"], e["name"]) for e in trail["events"]] == [
        ("append_line", "green"),
        ("write_file", "green"),
    ]
    assert window["events"] == middle
    assert instant["events"] == [middle[1]]


async def test_the_audit_roles_setting_decides_who_may_read(tmp_path: Path) -> None:
    async with open_audited(tmp_path, audit_roles=("owner", "viewer")) as api:
        await calls(api)
        viewer = await api.http.get(
            "/v1/audit", params={"scope": "user"}, headers=api.viewer.headers
        )

    assert viewer.status_code == 200, viewer.text
    assert len(viewer.json()["events"]) == 5


async def test_a_scope_or_an_area_alone_narrows_the_log(tmp_path: Path) -> None:
    """A caller auditing two scopes reads one with ``scope``, one area with
    ``area``; the operator's task reads the one entity it names."""
    async with open_audited(tmp_path) as api:
        both = api.both.headers
        assert (await api.http.get(TEA, headers=both)).status_code == 200
        roadmap = await api.http.get("/v1/files/team/plans/roadmap", headers=both)
        assert roadmap.status_code == 200, roadmap.text
        every = await api.http.get("/v1/audit", headers=both)
        team = await api.http.get("/v1/audit", params={"scope": "team"}, headers=both)
        plans = await api.http.get("/v1/audit", params={"area": "plans"}, headers=both)
        runner = build_task_runner(api.settings)
        operator = await runner.run(
            "memory.audit", input={"scope": "team", "entity_id": "acme"}
        )

    def seen(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
        return [(e["operation"], e["scope"], e["name"]) for e in events]

    assert seen(every.json()["events"]) == [
        ("read_file", "team", "roadmap"),
        ("read_file", "user", "tea"),
    ]
    assert team.status_code == plans.status_code == 200
    assert seen(team.json()["events"]) == [
        ("read_audit", "team", None),  # the first read of the log, over both
        ("read_file", "team", "roadmap"),
    ]
    assert seen(plans.json()["events"]) == [("read_file", "team", "roadmap")]
    assert [(e.operation, e.scope, e.name) for e in operator.events] == [
        ("read_audit", "team", None),  # the two reads of the log above
        ("read_audit", "team", None),
        ("read_file", "team", "roadmap"),
    ]
