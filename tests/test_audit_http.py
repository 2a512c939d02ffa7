"""The audit log over HTTP, as a person whose memory an agent keeps would use it.

Token A reads a file, lists an area, gets the index and writes a file; its own
GET /v1/audit answers those four calls newest first with the files it was
served; another entity's token sees none of them; a viewer is refused; a purge
leaves one memory.purge event and nothing naming a purged file.
"""

from pathlib import Path
from typing import Any

import pytest
from tenchi.errors import AppError
from tenchi.tasks import TaskInputError
from wenchang_client import AuditUnavailableError

from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.tasks import build_task_runner
from tests.support.audited_app import (
    Audited,
    open_audited,
    raw_bytes,
    stage_event,
    staged_count,
    staged_write,
)
from tests.support.in_process_client import open_in_process_client


async def four_calls(api: Audited) -> None:
    """Token A reads a file, lists an area, gets the index, writes a file."""
    alice = api.alice.headers
    read = await api.http.get("/v1/files/user/notes/tea", headers=alice)
    listed = await api.http.get("/v1/files/user/notes", headers=alice)
    index = await api.http.get("/v1/index", headers=alice)
    body: dict[str, Any] = {
        "content": "- [stated] green\n",
        "description": "d",
        "aliases": [],
    }
    written = await api.http.put(
        "/v1/files/user/notes/green",
        json=body,
        headers=alice | {"If-None-Match": "*"},
    )
    assert [r.status_code for r in (read, listed, index, written)] == [
        200,
        200,
        200,
        201,
    ]


async def test_the_owner_sees_its_four_calls_newest_first_with_files(
    tmp_path: Path,
) -> None:
    """GET /v1/audit answers write, index, list, read with what each was shown."""
    async with open_audited(tmp_path) as api:
        await four_calls(api)

        answer = await api.http.get("/v1/audit", headers=api.alice.headers)

    assert answer.status_code == 200
    events = answer.json()["events"]
    assert [e["operation"] for e in events] == [
        "write_file",
        "get_memory_index",
        "list_prefix",
        "read_file",
    ]
    write, index, listing, read = events
    assert (write["area"], write["name"], write["outcome"]) == ("notes", "green", "ok")
    assert index["files"] == ["notes/coffee", "notes/tea"]
    assert listing["files"] == ["notes/coffee", "notes/tea"]
    assert (read["name"], read["files"]) == ("tea", [])
    assert read["version"] is not None
    for event in events:
        assert event["surface"] == "http"
        assert event["actor"] == "claude"
        assert event["token_id"] == api.alice.token_id
        assert event["scope"] == "user"
        assert "entity_id" not in event
        assert "content" not in str(event)
    assert answer.json()["next_cursor"] is None


async def test_another_entity_sees_none_of_them(tmp_path: Path) -> None:
    """Bob's GET /v1/audit holds nothing of Alice's calls."""
    async with open_audited(tmp_path) as api:
        await four_calls(api)

        answer = await api.http.get("/v1/audit", headers=api.bob.headers)

    assert answer.status_code == 200
    assert answer.json()["events"] == []


async def test_a_viewer_gets_403_role_required(tmp_path: Path) -> None:
    """A role outside WENCHANG_AUDIT_ROLES is RESTRICTED_SCOPE role_required."""
    async with open_audited(tmp_path) as api:
        await four_calls(api)

        answer = await api.http.get("/v1/audit?scope=user", headers=api.viewer.headers)

    assert answer.status_code == 403
    details = answer.json()["details"]
    assert (details["reason"], details["required_roles"]) == (
        "role_required",
        ["admin", "owner"],
    )


async def test_a_refused_call_is_recorded_with_its_error_code(tmp_path: Path) -> None:
    """A stale write is an event whose outcome is VERSION_CONFLICT."""
    async with open_audited(tmp_path) as api:
        stale = await api.http.post(
            "/v1/files/user/notes/tea/lines",
            json={"line": "- [stated] x"},
            headers=api.alice.headers | {"If-Match": '"stale"'},
        )
        missing = await api.http.delete(
            "/v1/files/user/notes/tea", headers=api.alice.headers
        )

        events = (await api.http.get("/v1/audit", headers=api.alice.headers)).json()

    assert (stale.status_code, missing.status_code) == (412, 428)
    assert [(e["operation"], e["outcome"], e["version"]) for e in events["events"]] == [
        ("delete_file", "PRECONDITION_REQUIRED", None),
        ("append_line", "VERSION_CONFLICT", None),
    ]


async def test_a_purge_leaves_one_purge_event_and_no_purged_file(
    tmp_path: Path,
) -> None:
    """After memory.purge only its own event remains, and it names no file."""
    async with open_audited(tmp_path) as api:
        await four_calls(api)
        # An event staged by a write of a process that died before moving it.
        stage_event(tmp_path / "wenchang.db", staged_write("stagedcanary"), "v1")
        assert staged_count(tmp_path / "wenchang.db") >= 1
        runner = build_task_runner(api.settings)
        await runner.run(
            "memory.purge",
            input={"scope": "user", "entity_id": "alice", "dry_run": False},
        )
        left = raw_bytes(tmp_path)

        answer = await api.http.get("/v1/audit", headers=api.alice.headers)

    events = answer.json()["events"]
    purge = events[-1]
    assert [e["operation"] for e in events] == ["memory.purge"]
    assert (purge["surface"], purge["actor"], purge["outcome"]) == (
        "task",
        "task",
        "ok",
    )
    assert (purge["area"], purge["name"], purge["files"]) == (None, None, [])
    assert purge["token_id"] is None
    for trace in (b"notes/tea", b"notes/coffee", b"green", b"claude", b"canary"):
        assert trace not in left
    assert staged_count(tmp_path / "wenchang.db") == 0


async def test_a_query_answers_the_events_writes_staged_in_any_process(
    tmp_path: Path,
) -> None:
    """A staged event (another process's write, never moved) is in the answer."""
    database = tmp_path / "wenchang.db"
    async with open_audited(tmp_path) as api:
        staged = staged_write("elsewhere")
        stage_event(database, staged, "v-elsewhere")
        assert staged_count(database) == 1
        answer = await api.http.get("/v1/audit", headers=api.alice.headers)

    (event,) = answer.json()["events"]
    assert (event["request_id"], event["name"], event["version"]) == (
        staged.request_id,
        "elsewhere",
        "v-elsewhere",
    )
    assert staged_count(database) == 0


async def test_a_server_that_keeps_no_log_answers_501(tmp_path: Path) -> None:
    """With events on stdout, GET /v1/audit is AUDIT_UNAVAILABLE naming the store."""
    async with open_audited(tmp_path, audit="stdout") as api:
        answer = await api.http.get("/v1/audit", headers=api.alice.headers)

    assert answer.status_code == 501
    assert answer.json()["code"] == "AUDIT_UNAVAILABLE"
    assert answer.json()["details"]["store"] == "stdout"


async def test_without_a_log_the_client_and_the_task_get_audit_unavailable(
    tmp_path: Path,
) -> None:
    """With WENCHANG_AUDIT=none: AuditUnavailableError(store) and a typed task error."""
    async with open_audited(tmp_path, audit="none") as api:
        token = api.alice.headers["Authorization"].partition(" ")[2]
        app = build_app(
            api.settings, resolver=TokenFileResolver(api.settings.tokens_path)
        )
        async with open_in_process_client(app, token=token) as client:
            with pytest.raises(AuditUnavailableError) as refused:
                await client.read_audit(scope="user")
        runner = build_task_runner(api.settings)
        with pytest.raises(AppError) as task_refused:
            await runner.run(
                "memory.audit", input={"scope": "user", "entity_id": "alice"}
            )

    assert refused.value.store == "none"
    assert task_refused.value.code == "AUDIT_UNAVAILABLE"
    assert task_refused.value.details["store"] == "none"


@pytest.mark.parametrize(
    "bound",
    ["since=9999-12-31T23:59:59-14:00", "until=0001-01-01T00:00:00%2B14:00"],
)
async def test_a_time_bound_beyond_utc_is_a_validation_error(
    tmp_path: Path, bound: str
) -> None:
    """A bound whose offset takes it outside the years UTC can write is a 422."""
    async with open_audited(tmp_path) as api:
        answer = await api.http.get(f"/v1/audit?{bound}", headers=api.alice.headers)
        runner = build_task_runner(api.settings)
        field, _, moment = bound.replace("%2B", "+").partition("=")
        with pytest.raises(TaskInputError) as task_refused:
            await runner.run(
                "memory.audit",
                input={"scope": "user", "entity_id": "alice", field: moment},
            )

    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "VALIDATION_ERROR"
    assert answer.json()["details"]["errors"][0]["loc"][-1] == field
    assert task_refused.value.issues == ({"type": "value_error"},)
