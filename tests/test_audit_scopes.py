"""A call over several scopes is one event per scope, each with that scope's files.

The index and a search without a scope serve files of every granted scope; each
scope's owner must see exactly what was shown from their memory, and a purge of
one entity must erase exactly its part. So such a call leaves one event per
granted scope, sharing the call's request_id; a search narrowed to one scope
leaves one event.
"""

from pathlib import Path
from typing import Any

from tests.support.audited_app import Audited, Holder, open_audited


async def events(api: Audited, holder: Holder, **query: str) -> list[dict[str, Any]]:
    answer = await api.http.get("/v1/audit", params=query, headers=holder.headers)
    assert answer.status_code == 200, answer.text
    return answer.json()["events"]


def by_scope(found: list[dict[str, Any]], operation: str) -> dict[str, list[str]]:
    return {e["scope"]: e["files"] for e in found if e["operation"] == operation}


async def test_the_index_is_one_event_per_scope_with_its_files(
    tmp_path: Path,
) -> None:
    async with open_audited(tmp_path) as api:
        index = await api.http.get("/v1/index", headers=api.both.headers)
        user = await events(api, api.both, scope="user", operation="get_memory_index")
        team = await events(api, api.both, scope="team", operation="get_memory_index")
        alice = await events(api, api.alice, operation="get_memory_index")

    assert index.status_code == 200
    assert len(index.json()["entries"]) == 3
    assert by_scope(user, "get_memory_index") == {"user": ["notes/coffee", "notes/tea"]}
    assert by_scope(team, "get_memory_index") == {"team": ["plans/roadmap"]}
    assert user[0]["request_id"] == team[0]["request_id"]
    # Alice's own token sees the part shown from her memory, nothing of acme's.
    assert [(e["scope"], e["files"]) for e in alice] == [
        ("user", ["notes/coffee", "notes/tea"])
    ]


async def test_a_search_without_scope_is_one_event_per_scope(tmp_path: Path) -> None:
    async with open_audited(tmp_path) as api:
        found = await api.http.get(
            "/v1/search", params={"query": "oolong"}, headers=api.both.headers
        )
        narrowed = await api.http.get(
            "/v1/search",
            params={"query": "oolong", "scope": "team"},
            headers=api.both.headers,
        )
        seen = await events(api, api.both, operation="search_memory")

    assert (found.status_code, narrowed.status_code) == (200, 200)
    assert len(found.json()["hits"]) == 3
    oldest_first = [(e["scope"], sorted(e["files"])) for e in reversed(seen)]
    assert oldest_first[2:] == [("team", ["plans/roadmap"])]
    assert sorted(oldest_first[:2]) == [
        ("team", ["plans/roadmap"]),
        ("user", ["notes/coffee", "notes/tea"]),
    ]
    assert seen[1]["request_id"] == seen[2]["request_id"] != seen[0]["request_id"]
