"""Version history over HTTP, on the backend ``WENCHANG_TEST_STORAGE`` selects.

Like the rest of the HTTP suite, this runs once per backend in CI (SQLite in the
main step, then memory, file and the GCS emulator); every backend's history is
also held to the storage and transport conformance suites in the main step.

create -> append -> replace -> delete leaves four records newest first (the
tombstone first); every version reads back; a restore with the right
precondition re-creates the deleted file (201) as a new version; the error
cases (system/, unknown version, stale If-Match, no precondition, tombstone)
answer as documented and change nothing.
"""

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx
import pytest
from wenchang_client import AsyncMemoryClient
from wenchang_client.errors import InvalidArgumentError

from app.shared.errors import invalid_version_error
from tests.http_support import FILE, Api, create, file_body, if_match, open_api

VERSIONS = f"{FILE}/versions"
RESTORE = f"{FILE}/restore"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as opened:
        yield opened


def assert_app_error(
    response: httpx.Response, status: int, code: str, **details: Any
) -> None:
    """An app error with this status and code whose details include ``details``."""
    assert response.status_code == status, response.text
    envelope = response.json()
    assert envelope["code"] == code
    assert {k: envelope["details"].get(k) for k in details} == details
    assert "alice" not in response.text


async def every_version(api: Api) -> list[dict[str, Any]]:
    """All of the file's version entries, following next_cursor (pages of 2)."""
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {"cursor": cursor} if cursor else {}
        page = await api.http.get(VERSIONS, params=params, headers=api.alice)
        assert page.status_code == 200, page.text
        entries += page.json()["entries"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return entries


async def lifecycle(api: Api) -> list[dict[str, Any]]:
    """create, append, replace, delete as alice; each step's file."""
    created = await create(api, content="- [stated] Likes tea.\n")
    appended = await api.http.post(
        f"{FILE}/lines",
        json={"line": "- [observed] Drinks oolong"},
        headers=api.desktop | if_match(created["version"]),
    )
    assert appended.status_code == 200, appended.text
    replaced = await api.http.post(
        f"{FILE}/replace",
        json={"old_string": "oolong", "new_string": "sencha"},
        headers=api.alice | if_match(appended.json()["version"]),
    )
    assert replaced.status_code == 200, replaced.text
    deleted = await api.http.delete(
        FILE, headers=api.alice | if_match(replaced.json()["version"])
    )
    assert deleted.status_code == 204, deleted.text
    return [created, appended.json(), replaced.json()]


async def test_four_changes_leave_four_records_newest_first(api: Api) -> None:
    files = await lifecycle(api)

    entries = await every_version(api)

    assert [e["operation"] for e in entries] == [
        "delete_file",
        "replace_fact",
        "append_line",
        "write_file",
    ]
    assert [e["actor"] for e in entries] == ["http", "http", "claude-desktop", "http"]
    assert [e["deleted"] for e in entries] == [True, False, False, False]
    assert [e["version"] for e in entries[1:]] == [f["version"] for f in files[::-1]]
    assert [e["at"] for e in entries[1:]] == [f["last_updated"] for f in files[::-1]]
    assert entries[3]["size"] == len(files[0]["content"].encode())
    assert "content" not in entries[0] and "file" not in entries[0]


async def test_pages_follow_next_cursor(api: Api) -> None:
    await lifecycle(api)

    first = await api.http.get(VERSIONS, headers=api.alice)
    cursor = first.json()["next_cursor"]
    second = await api.http.get(VERSIONS, params={"cursor": cursor}, headers=api.alice)
    foreign = await api.http.get(
        "/v1/files/user/notes/other/versions",
        params={"cursor": cursor},
        headers=api.alice,
    )

    # open_api lists two entries per page.
    assert len(first.json()["entries"]) == 2 and cursor
    assert [e["operation"] for e in second.json()["entries"]] == [
        "append_line",
        "write_file",
    ]
    assert_app_error(foreign, 422, "INVALID_ARGUMENT", argument="cursor")


async def test_each_version_reads_back_and_a_tombstone_has_no_content(
    api: Api,
) -> None:
    files = await lifecycle(api)
    tomb = (await api.http.get(VERSIONS, headers=api.alice)).json()["entries"][0]

    first = await api.http.get(f"{VERSIONS}/{files[0]['version']}", headers=api.alice)
    dead = await api.http.get(f"{VERSIONS}/{tomb['version']}", headers=api.alice)

    assert first.status_code == 200, first.text
    assert first.json()["file"] == files[0]
    assert first.json()["operation"] == "write_file"
    assert dead.json()["deleted"] is True and dead.json()["file"]["content"] == ""


async def test_restore_recreates_a_deleted_file_as_a_new_version(api: Api) -> None:
    files = await lifecycle(api)

    restored = await api.http.post(
        RESTORE,
        json={"version": files[0]["version"]},
        headers=api.desktop | {"If-None-Match": "*"},
    )

    assert restored.status_code == 201, restored.text
    body = restored.json()
    assert body["content"] == files[0]["content"]
    assert body["version"] not in {f["version"] for f in files}
    assert restored.headers["etag"] == f'"{body["version"]}"'
    assert body["sources"] == ["claude-desktop", "http"]
    read = await api.http.get(FILE, headers=api.alice)
    assert read.json() == body
    newest = (await every_version(api))[0]
    assert (newest["operation"], newest["actor"]) == (
        "restore_version",
        "claude-desktop",
    )


async def test_restore_over_a_live_file_needs_its_current_version(api: Api) -> None:
    created = await create(api)
    second = await api.http.put(
        FILE,
        json=file_body("- [stated] Changed.\n"),
        headers=api.alice | if_match(created["version"]),
    )
    current = second.json()["version"]
    body = {"version": created["version"]}

    stale = await api.http.post(
        RESTORE, json=body, headers=api.alice | if_match(created["version"])
    )
    missing = await api.http.post(RESTORE, json=body, headers=api.alice)
    create_only = await api.http.post(
        RESTORE, json=body, headers=api.alice | {"If-None-Match": "*"}
    )
    fine = await api.http.post(
        RESTORE, json=body, headers=api.alice | if_match(current)
    )

    assert_app_error(
        stale, 412, "VERSION_CONFLICT", content="- [stated] Changed.\n", version=current
    )
    assert missing.status_code == 428, missing.text
    assert create_only.status_code == 412, create_only.text
    assert fine.status_code == 200, fine.text
    assert fine.json()["content"] == created["content"]


async def test_restore_refuses_system_unknown_versions_and_tombstones(
    api: Api,
) -> None:
    files = await lifecycle(api)
    tomb = (await api.http.get(VERSIONS, headers=api.alice)).json()["entries"][0]
    star = {"If-None-Match": "*"}

    system = await api.http.post(
        "/v1/files/user/system/rules/restore",
        json={"version": files[0]["version"]},
        headers=api.alice | star,
    )
    unknown = await api.http.post(
        RESTORE, json={"version": "no-such-version"}, headers=api.alice | star
    )
    dead = await api.http.post(
        RESTORE, json={"version": tomb["version"]}, headers=api.alice | star
    )
    absent = await api.http.get(f"{VERSIONS}/no-such-version", headers=api.alice)

    assert_app_error(system, 403, "RESTRICTED_SCOPE", reason="system_read_only")
    assert_app_error(unknown, 404, "MEMORY_NOT_FOUND", reason="version_absent")
    assert_app_error(dead, 422, "INVALID_ARGUMENT", argument="version")
    assert_app_error(absent, 404, "MEMORY_NOT_FOUND", reason="version_absent")
    assert (await api.http.get(FILE, headers=api.alice)).status_code == 404


async def test_a_file_never_written_has_no_history(api: Api) -> None:
    response = await api.http.get(VERSIONS, headers=api.alice)

    assert_app_error(response, 404, "MEMORY_NOT_FOUND", reason="file_absent")


async def test_another_entitys_history_is_never_visible(api: Api) -> None:
    """bob's user scope is his own entity: alice's history does not exist there."""
    files = await lifecycle(api)

    listed = await api.http.get(VERSIONS, headers=api.bob)
    read = await api.http.get(f"{VERSIONS}/{files[0]['version']}", headers=api.bob)
    restored = await api.http.post(
        RESTORE,
        json={"version": files[0]["version"]},
        headers=api.bob | {"If-None-Match": "*"},
    )

    assert_app_error(listed, 404, "MEMORY_NOT_FOUND", reason="file_absent")
    assert_app_error(read, 404, "MEMORY_NOT_FOUND", reason="version_absent")
    assert_app_error(restored, 404, "MEMORY_NOT_FOUND", reason="version_absent")


async def test_a_version_holding_a_slash_is_invalid_argument(api: Api) -> None:
    """No version holds '/': sent encoded in the path or in restore's body, the
    answer is INVALID_ARGUMENT on ``version``, as MCP and the client give. A raw
    '/' makes another path (``versions/a/b``), which no route serves: 404."""
    await lifecycle(api)

    encoded = await api.http.get(f"{VERSIONS}/a%2Fb", headers=api.alice)
    restore = await api.http.post(
        RESTORE, json={"version": "a/b"}, headers=api.alice | {"If-None-Match": "*"}
    )
    raw = await api.http.get(f"{VERSIONS}/a/b", headers=api.alice)

    assert_app_error(encoded, 422, "INVALID_ARGUMENT", argument="version")
    assert_app_error(restore, 422, "INVALID_ARGUMENT", argument="version")
    assert raw.status_code == 404, raw.text
    assert (await api.http.get(FILE, headers=api.alice)).status_code == 404


async def test_a_version_holding_a_slash_has_one_payload_on_every_surface(
    api: Api,
) -> None:
    """``versions/a%2Fb`` over HTTP, ``a/b`` in restore's body, an MCP
    read_version and the typed client all give invalid_version_error's payload
    (code, details and message), not each their own sentence."""
    await lifecycle(api)
    expected = invalid_version_error("a/b")
    mcp_call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "read_version",
            "arguments": {"scope": "user", "area": "notes", "name": "tea"}
            | {"version": "a/b"},
        },
    }
    accept = {"accept": "application/json, text/event-stream", "host": "127.0.0.1"}

    encoded = await api.http.get(f"{VERSIONS}/a%2Fb", headers=api.alice)
    restore = await api.http.post(
        RESTORE, json={"version": "a/b"}, headers=api.alice | {"If-None-Match": "*"}
    )
    mcp = await api.http.post("/mcp", json=mcp_call, headers=api.alice | accept)
    async with AsyncMemoryClient("http://127.0.0.1:9", token="wct_x") as client:
        with pytest.raises(InvalidArgumentError) as raised:
            await client.read_version("user", "notes", "tea", "a/b")

    error = mcp.json()["result"]["structuredContent"]["error"]
    mcp_details = {k: v for k, v in error["details"].items() if k != "request_id"}
    payloads = [
        (r.json()["code"], r.json()["details"], r.json()["message"])
        for r in (encoded, restore)
    ] + [
        (error["code"], mcp_details, error["message"]),
        (raised.value.code, dict(raised.value.details), raised.value.message),
    ]
    assert encoded.status_code == restore.status_code == 422
    assert payloads == [(expected.code, expected.details, expected.message)] * 4
