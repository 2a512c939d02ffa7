"""GET /v1/changes: the change feed's pages through the HTTP surface.

The event stream, across processes and reconnects, is
``tests/test_changes_processes.py``'s.
"""

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.features.memory.schemas import SweepReport
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.http_support import (
    Api,
    Headers,
    assert_app_error,
    create,
    file_body,
    open_api,
)
from tests.support.storage_adapters import selected_storage, storage_url

FILE = "/v1/files/user/notes/tea"
STREAM = {"accept": "text/event-stream"}
WHAT_TO_DO = (
    "read the current files again, then read the feed without a cursor "
    "(or from its newest change)"
)


@pytest.fixture
async def api(tmp_path: Path) -> Any:
    async with open_api(tmp_path) as api:
        yield api


async def feed(api: Api, who: Headers, **params: str) -> dict[str, Any]:
    response = await api.http.get("/v1/changes", params=params, headers=who)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


async def test_changes_name_each_write_in_order_and_never_its_content(
    api: Api,
) -> None:
    created = await create(api, FILE, "- [stated] Secret tea.\n")
    line = {"line": "- [stated] More tea."}
    appended = await api.http.post(
        f"{FILE}/lines",
        json=line,
        headers=api.alice | {"If-Match": f'"{created["version"]}"'},
    )
    assert appended.status_code == 200, appended.text
    page = await feed(api, api.alice, scope="user")
    assert [
        (c["operation"], c["scope"], c["area"], c["name"], c["version"], c["actor"])
        for c in page["changes"]
    ] == [
        ("write_file", "user", "notes", "tea", created["version"], "http"),
        ("append_line", "user", "notes", "tea", appended.json()["version"], "http"),
    ]
    assert "Secret" not in str(page) and "More" not in str(page)
    assert [c["at"] for c in page["changes"]] == [
        created["last_updated"],
        appended.json()["last_updated"],
    ]
    assert set(page["changes"][0]) == {
        "cursor",
        "at",
        "operation",
        "scope",
        "area",
        "name",
        "version",
        "actor",
    }
    assert page["next_cursor"] == page["changes"][-1]["cursor"]
    after = await feed(api, api.alice, scope="user", after=page["changes"][0]["cursor"])
    assert after["changes"] == page["changes"][1:]
    caught_up = await feed(api, api.alice, scope="user", after=page["next_cursor"])
    assert caught_up == {"changes": [], "next_cursor": page["next_cursor"]}


async def test_callers_see_only_their_own_entities_changes(api: Api) -> None:
    await create(api, FILE)
    assert (await feed(api, api.bob, scope="user"))["changes"] == []
    mine = await feed(api, api.alice, scope="user")
    response = await api.http.get(
        "/v1/changes",
        params={"scope": "user", "after": mine["next_cursor"]},
        headers=api.bob,
    )
    assert_app_error(
        response,
        422,
        "INVALID_ARGUMENT",
        error="InvalidArgumentError",
        category="recoverable",
        argument="cursor",
    )


async def test_a_malformed_cursor_is_invalid(api: Api) -> None:
    response = await api.http.get(
        "/v1/changes", params={"scope": "user", "after": "nope"}, headers=api.alice
    )
    assert_app_error(
        response,
        422,
        "INVALID_ARGUMENT",
        error="InvalidArgumentError",
        category="recoverable",
        argument="cursor",
    )


async def test_a_cursor_past_the_retention_is_gone(api: Api, tmp_path: Path) -> None:
    if selected_storage() != "sqlite":
        pytest.skip("ages the log's rows in the SQLite file")
    await create(api, FILE)
    early = await feed(api, api.alice, scope="user")
    await create(api, "/v1/files/user/notes/coffee")
    await create(api, "/v1/files/user/notes/water")
    # Eight days pass for the two older changes (the clock is the server's own).
    with sqlite3.connect(next(tmp_path.glob("*.db"))) as db:
        db.execute(
            "UPDATE memory_changes SET at = '2020-01-01T00:00:00Z' "
            "WHERE seq < (SELECT min(seq) + 2 FROM memory_changes)"
        )
    response = await api.http.get(
        "/v1/changes",
        params={"scope": "user", "after": early["next_cursor"]},
        headers=api.alice,
    )
    assert_app_error(
        response,
        410,
        "CURSOR_EXPIRED",
        error="CursorExpiredError",
        category="recoverable",
        scope="user",
    )
    assert WHAT_TO_DO in response.json()["message"]
    stream = await api.http.get(
        "/v1/changes",
        params={"scope": "user"},
        headers=api.alice | STREAM | {"last-event-id": early["next_cursor"]},
    )
    assert stream.status_code == 410
    assert_app_error(
        stream,
        410,
        "CURSOR_EXPIRED",
        error="CursorExpiredError",
        category="recoverable",
        scope="user",
    )
    assert stream.json()["message"] == response.json()["message"]
    restart = await feed(api, api.alice, scope="user")
    assert [c["name"] for c in restart["changes"]] == ["water"]


@pytest.mark.parametrize("kind", ["sqlite", "file"])
async def test_a_cursor_from_before_a_purge_stays_gone_after_new_writes(
    tmp_path: Path, kind: str
) -> None:
    """The log begun after memory.purge reuses no number: a cursor taken before
    it is 410 however many writes follow, never a page that skips them.

    (The in-memory adapter's case is the feature test of read_changes: a task
    run in another process cannot reach an in-memory store.)"""
    url = storage_url(kind, tmp_path)
    async with open_api(tmp_path, storage=url) as api:
        await create(api, FILE)
        await create(api, "/v1/files/user/notes/coffee")
        before = await feed(api, api.alice, scope="user")
        runner = build_task_runner(
            Settings(storage=url, tokens_file=str(tmp_path / "tokens.json"))
        )
        purge = {"scope": "user", "entity_id": "alice", "dry_run": False}
        await runner.run("memory.purge", input=purge)
        for name in ("one", "two", "three"):
            await create(api, f"/v1/files/user/notes/{name}")
        response = await api.http.get(
            "/v1/changes",
            params={"scope": "user", "after": before["next_cursor"]},
            headers=api.alice,
        )
        restart = await feed(api, api.alice, scope="user")
    assert_app_error(
        response,
        410,
        "CURSOR_EXPIRED",
        error="CursorExpiredError",
        category="recoverable",
        scope="user",
    )
    assert [c["name"] for c in restart["changes"]] == ["one", "two", "three"]


@pytest.mark.parametrize("kind", ["sqlite", "file"])
async def test_a_sweep_of_the_newest_changes_file_reissues_no_cursor(
    tmp_path: Path, kind: str
) -> None:
    """memory.sweep_expired erases the file that made the feed's newest changes:
    the next write still gets a new cursor, so a reader holding the old one
    sees it (a reused number would hide it from that reader for good)."""
    url = storage_url(kind, tmp_path)
    async with open_api(tmp_path, storage=url) as api:
        await create(api, FILE)
        brief = await api.http.put(
            "/v1/files/user/notes/brief",
            json=file_body() | {"ttl_seconds": 1},
            headers=api.alice | {"If-None-Match": "*"},
        )
        assert brief.status_code == 201, brief.text
        held = await feed(api, api.alice, scope="user")
        await asyncio.sleep(1.1)
        runner = build_task_runner(
            Settings(storage=url, tokens_file=str(tmp_path / "tokens.json"))
        )
        swept = await runner.run("memory.sweep_expired", input={"dry_run": False})
        assert isinstance(swept, SweepReport)
        assert [f.name for f in swept.files] == ["brief"]
        await create(api, "/v1/files/user/notes/later")
        page = await feed(api, api.alice, scope="user", after=held["next_cursor"])
    assert [c["name"] for c in page["changes"]] == ["later"]
    assert page["next_cursor"] != held["next_cursor"]
