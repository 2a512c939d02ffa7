"""Expiry across two `wenchang serve` processes on one SQLite file.

A file written with ``ttl_seconds`` through one process, or into an area with a
default lifetime (``WENCHANG_AREA_TTL``), shows ``expires_at``; from that
instant the other process no longer serves it (read 404, absent from list,
index and search) with no sweeper running, an owner still reads it with
``include_expired=true`` (a file, a listing, the index, search) while a member
is refused, and a create-only write takes its place.
"""

import time
from collections.abc import Generator
from pathlib import Path

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.support.server import running_servers

TTL = 2
CONTENT: dict[str, object] = {
    "content": "- [stated] Brief.\n",
    "description": "d",
    "aliases": [],
}


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Generator[tuple[str, str, str, str]]:
    directory = tmp_path_factory.mktemp("expiry")
    tokens = directory / "tokens.json"
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{directory / 'shared.db'}",
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_RATE_LIMIT": "0",
        "WENCHANG_AREA_TTL": f'{{"scratch": "{TTL}s"}}',
    }
    owner, _ = create_token(Path(tokens), parse_grants(["user=alice:owner"]))
    member, _ = create_token(Path(tokens), parse_grants(["user=alice:member"]))
    with running_servers(2, directory, settings=settings) as pair:
        yield pair[0].url, pair[1].url, owner, member


def client(url: str, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


def names(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [entry["name"] for entry in answer.json()["entries"]]


def test_an_expired_file_is_gone_from_the_other_process(
    servers: tuple[str, str, str, str],
) -> None:
    first_url, second_url, owner, member = servers
    with (
        client(first_url, owner) as first,
        client(second_url, owner) as second,
        client(second_url, member) as other,
    ):
        create = {"If-None-Match": "*"}
        brief = first.put(
            "/v1/files/user/notes/brief",
            json={**CONTENT, "ttl_seconds": TTL},
            headers=create,
        )
        scratch = first.put("/v1/files/user/scratch/pad", json=CONTENT, headers=create)
        kept = first.put("/v1/files/user/notes/kept", json=CONTENT, headers=create)
        assert [brief.status_code, scratch.status_code, kept.status_code] == [201] * 3
        assert brief.json()["expires_at"] and scratch.json()["expires_at"]
        assert "expires_at" not in kept.json()
        assert second.get("/v1/files/user/notes/brief").status_code == 200
        assert second.get("/v1/search", params={"q": "brief"}).json()["hits"]

        time.sleep(TTL + 0.5)

        gone = second.get("/v1/files/user/notes/brief")
        assert gone.status_code == 404
        assert gone.json()["code"] == "MEMORY_NOT_FOUND"
        assert second.get("/v1/files/user/scratch/pad").status_code == 404
        assert names(second.get("/v1/files/user")) == ["kept"]
        assert names(second.get("/v1/index")) == ["kept"]
        hits = second.get("/v1/search", params={"q": "brief"}).json()["hits"]
        assert [hit["name"] for hit in hits] == ["kept"]

        shown = second.get(
            "/v1/files/user/notes/brief", params={"include_expired": "true"}
        )
        listed = second.get("/v1/files/user", params={"include_expired": "true"})
        assert_index_views_apart(second, other)
        refused = other.get(
            "/v1/files/user/notes/brief", params={"include_expired": "true"}
        )
        assert shown.status_code == 200 and shown.json()["expires_at"]
        assert names(listed) == ["brief", "kept", "pad"]
        found = second.get(
            "/v1/search", params={"q": "brief", "include_expired": "true"}
        )
        assert sorted(hit["name"] for hit in found.json()["hits"]) == [
            "brief",
            "kept",
            "pad",
        ]
        not_owner = other.get(
            "/v1/search", params={"q": "brief", "include_expired": "true"}
        )
        assert not_owner.status_code == 403
        assert refused.status_code == 403
        assert refused.json()["details"]["reason"] == "role_required"

        again = second.put("/v1/files/user/notes/brief", json=CONTENT, headers=create)
        assert again.status_code == 201
        assert "expires_at" not in again.json()
        assert first.get("/v1/files/user/notes/brief").status_code == 200


def assert_index_views_apart(owner: httpx.Client, member: httpx.Client) -> None:
    """The owner's index with expired files, and the default one, each answer
    304 only to their own ETag."""
    shown = {"include_expired": "true"}
    default = owner.get("/v1/index")
    owned = owner.get("/v1/index", params=shown)
    assert names(default) == ["kept"]
    assert sorted(names(owned)) == ["brief", "kept", "pad"]
    assert default.headers["etag"] != owned.headers["etag"]
    crossed = owner.get(
        "/v1/index", params=shown, headers={"If-None-Match": default.headers["etag"]}
    )
    held = owner.get(
        "/v1/index", params=shown, headers={"If-None-Match": owned.headers["etag"]}
    )
    back = owner.get("/v1/index", headers={"If-None-Match": owned.headers["etag"]})
    assert (crossed.status_code, held.status_code, back.status_code) == (200, 304, 200)
    assert sorted(names(crossed)) == ["brief", "kept", "pad"] and names(back) == [
        "kept"
    ]
    refused = member.get("/v1/index", params=shown)
    assert refused.status_code == 403
    assert refused.json()["details"]["reason"] == "role_required"
