"""A restore follows write_file's rules (docs/history.md): write roles, the file
quota and the size limit, over HTTP; a refused restore changes nothing.

Each is a way an old version could slip past a rule the current settings hold:
a member restoring a role-gated file, a restore re-creating a file beyond the
entity's cap, a version written under a larger size limit.
"""

from pathlib import Path
from typing import Any

import httpx

from tests.http_support import Api, file_body, if_match, open_api

TEAM = "/v1/files/team/notes/plan"
STAR = {"If-None-Match": "*"}


def assert_refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    details: dict[str, Any] = response.json()["details"]
    return details


async def created_then_deleted(api: Api, path: str, headers: dict[str, str]) -> str:
    """The version of a file written and then deleted at ``path``."""
    made = await api.http.put(path, json=file_body(), headers=headers | STAR)
    assert made.status_code == 201, made.text
    version: str = made.json()["version"]
    gone = await api.http.delete(path, headers=headers | if_match(version))
    assert gone.status_code == 204, gone.text
    return version


async def history_of(api: Api, path: str, headers: dict[str, str]) -> list[str]:
    listed = await api.http.get(f"{path}/versions", headers=headers)
    return [entry["operation"] for entry in listed.json()["entries"]]


async def test_a_member_cannot_restore_a_role_gated_file(tmp_path: Path) -> None:
    """team is writable by owner and admin: bob (admin) may, alice (member) not."""
    async with open_api(tmp_path) as api:
        version = await created_then_deleted(api, TEAM, api.bob)
        body = {"version": version}

        refused = await api.http.post(
            f"{TEAM}/restore", json=body, headers=api.alice | STAR
        )
        unchanged = await history_of(api, TEAM, api.alice)
        allowed = await api.http.post(
            f"{TEAM}/restore", json=body, headers=api.bob | STAR
        )

    details = assert_refused(refused, 403, "RESTRICTED_SCOPE")
    assert (details["reason"], details["required_roles"]) == (
        "role_required",
        ["admin", "owner"],
    )
    assert unchanged == ["delete_file", "write_file"]
    assert allowed.status_code == 201, allowed.text


async def test_a_restore_that_re_creates_a_file_counts_against_the_cap(
    tmp_path: Path,
) -> None:
    """At one file per entity, re-creating a deleted file while another is
    live is FILE_QUOTA_EXCEEDED, as a create would be."""
    async with open_api(tmp_path, max_files_per_entity=1) as api:
        gone = "/v1/files/user/notes/gone"
        version = await created_then_deleted(api, gone, api.alice)
        live = await api.http.put(
            "/v1/files/user/notes/live", json=file_body(), headers=api.alice | STAR
        )
        assert live.status_code == 201, live.text

        refused = await api.http.post(
            f"{gone}/restore", json={"version": version}, headers=api.alice | STAR
        )
        still_gone = await api.http.get(gone, headers=api.alice)

    assert assert_refused(refused, 409, "FILE_QUOTA_EXCEEDED")["limit"] == 1
    assert still_gone.status_code == 404


async def test_a_version_over_a_lowered_size_limit_is_not_restored(
    tmp_path: Path,
) -> None:
    """A version written under a 64-byte limit is OVERSIZE_WRITE once the limit
    is 16 bytes; the current file stays as it is."""
    storage = {"storage": f"sqlite:///{tmp_path / 'wenchang.db'}"}
    path = "/v1/files/user/notes/long"
    async with open_api(tmp_path, **storage) as api:
        old = await api.http.put(
            path,
            json=file_body("- [stated] " + "x" * 40 + "\n"),
            headers=api.alice | STAR,
        )
        short = await api.http.put(
            path,
            json=file_body("- [stated] y\n"),
            headers=api.alice | if_match(old.json()["version"]),
        )
        assert short.status_code == 200, short.text
    async with open_api(tmp_path, max_file_bytes=16, **storage) as api:
        refused = await api.http.post(
            f"{path}/restore",
            json={"version": old.json()["version"]},
            headers=api.alice | if_match(short.json()["version"]),
        )
        current = await api.http.get(path, headers=api.alice)

    details = assert_refused(refused, 413, "OVERSIZE_WRITE")
    assert (details["size"], details["limit"]) == (52, 16)
    assert current.json() == short.json()
