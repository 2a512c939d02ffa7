"""Webhook management through HTTP (docs/changes.md#webhooks): what an owner
is answered, and the refusals of anyone else, as the error envelope says."""

from pathlib import Path
from typing import Any

import pytest

from tests.http_support import Api, open_api

HOOK = {"url": "https://hooks.example.com/wenchang", "description": "ci"}


@pytest.fixture
async def api(tmp_path: Path) -> Any:
    async with open_api(tmp_path) as api:
        yield api


async def test_an_owner_adds_lists_and_removes_an_endpoint_of_its_own(
    api: Api,
) -> None:
    added = await api.http.post("/v1/webhooks/user", json=HOOK, headers=api.alice)
    assert added.status_code == 201, added.text
    created = added.json()
    assert set(created) == {"id", "url", "description", "secret", "created_at"}
    assert (created["url"], created["description"]) == (HOOK["url"], "ci")
    assert created["secret"].startswith("whsec_")
    listed = await api.http.get("/v1/webhooks/user", headers=api.alice)
    [hook] = listed.json()["webhooks"]
    assert set(hook) == {"id", "url", "description", "created_at", "delivery"}
    assert (hook["id"], hook["delivery"]["status"]) == (created["id"], "active")
    assert created["secret"] not in listed.text
    theirs = await api.http.get("/v1/webhooks/user", headers=api.bob)
    assert theirs.json() == {"webhooks": []}
    removed = await api.http.delete(
        f"/v1/webhooks/user/{created['id']}", headers=api.alice
    )
    assert removed.status_code == 204
    again = await api.http.get("/v1/webhooks/user", headers=api.alice)
    assert again.json() == {"webhooks": []}


async def test_only_the_owner_of_the_scope_and_endpoint_may_manage_it(
    api: Api,
) -> None:
    member = await api.http.post("/v1/webhooks/team", json=HOOK, headers=api.alice)
    assert member.status_code == 403, member.text
    assert member.json()["code"] == "RESTRICTED_SCOPE"
    assert member.json()["details"]["reason"] == "role_required"
    assert member.json()["details"]["required_roles"] == ["owner"]
    added = await api.http.post("/v1/webhooks/user", json=HOOK, headers=api.alice)
    hook_id = added.json()["id"]
    for method, path in (
        ("DELETE", f"/v1/webhooks/user/{hook_id}"),
        ("POST", f"/v1/webhooks/user/{hook_id}/enable"),
    ):
        other = await api.http.request(method, path, headers=api.bob)
        assert other.status_code == 404, other.text
        assert other.json()["code"] == "MEMORY_NOT_FOUND"
    anonymous = await api.http.get("/v1/webhooks/user")
    assert anonymous.status_code == 401
    unsafe = await api.http.post(
        "/v1/webhooks/user", json={"url": "http://10.0.0.1/hook"}, headers=api.alice
    )
    assert unsafe.status_code == 422
    assert unsafe.json()["details"]["argument"] == "url"
    listed = await api.http.get("/v1/webhooks/user", headers=api.alice)
    assert [h["id"] for h in listed.json()["webhooks"]] == [hook_id]
