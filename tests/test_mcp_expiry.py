"""Expiry through the MCP tools: write_file sets it, an expired file is gone
for read_file, list_prefix and the index, and include_expired is for scope owners."""

from collections.abc import Iterator
from typing import Any

import pytest

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import failed, http_session, ok, serve

PAST = "2020-01-01T00:00:00Z"


def args(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "scope": "user",
        "area": "notes",
        "name": name,
        "content": "- [stated] Brief.\n",
        "description": "",
        "aliases": [],
        "expected_version": None,
        **extra,
    }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    tmp = tmp_path_factory.mktemp("mcp-expiry")
    tokens = tmp / "tokens.json"
    owner, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    member, _ = create_token(tokens, parse_grants(["user=alice:member"]))
    settings = Settings(storage="memory://", tokens_file=str(tokens))
    with serve(build_app(settings)) as url:
        yield url, owner, member


async def test_an_expired_file_is_gone_for_agents(
    served: tuple[str, str, str],
) -> None:
    url, owner, member = served
    where = {"scope": "user", "area": "notes", "name": "old"}
    async with http_session(url, owner) as session:
        lasting = ok(await session.call_tool("write_file", args("new", ttl_seconds=60)))
        old = ok(await session.call_tool("write_file", args("old", expires_at=PAST)))
        missing = await session.call_tool("read_file", where)
        listed = ok(await session.call_tool("list_prefix", {"scope": "user"}))
        shown = ok(
            await session.call_tool("read_file", {**where, "include_expired": True})
        )
        hidden = ok(await session.call_tool("search_memory", {"query": "brief"}))
        found = ok(
            await session.call_tool(
                "search_memory", {"query": "brief", "include_expired": True}
            )
        )
        indexed = ok(await session.call_tool("get_memory_index", {}))
        owned = ok(
            await session.call_tool("get_memory_index", {"include_expired": True})
        )
        again = ok(await session.call_tool("write_file", args("old")))
    async with http_session(url, member) as session:
        refused = await session.call_tool(
            "read_file", {**where, "include_expired": True}
        )
        index_refused = await session.call_tool(
            "get_memory_index", {"include_expired": True}
        )

    assert lasting["expires_at"] > PAST
    assert old["expires_at"] == PAST
    assert failed(missing, "MEMORY_NOT_FOUND")["name"] == "old"
    assert [entry["name"] for entry in listed["entries"]] == ["new"]
    assert shown["expires_at"] == PAST
    assert [hit["name"] for hit in hidden["hits"]] == ["new"]
    assert sorted(hit["name"] for hit in found["hits"]) == ["new", "old"]
    assert [entry["name"] for entry in indexed["entries"]] == ["new"]
    assert sorted(entry["name"] for entry in owned["entries"]) == ["new", "old"]
    assert "expires_at" not in again
    assert failed(index_refused, "RESTRICTED_SCOPE")["reason"] == "role_required"
    details = failed(refused, "RESTRICTED_SCOPE")
    assert (details["reason"], details["required_roles"]) == (
        "role_required",
        ["owner"],
    )
