"""Each audit event carries the fields of its own call, whatever came before it.

A fresh `wenchang serve` process (nothing remembered from other tests) answers
MCP calls whose requests lack fields first — the index (no area or name),
a listing (no name) — and then file calls that have them; or the other way
round. Read back over HTTP, every event names exactly its call's scope, area,
name and version: what an event reads of one kind of request never leaks into
another's.
"""

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.support.server import running_servers
from tests.support.transports import McpTransport, mcp_transport

Expected = tuple[str, str | None, str | None, str | None, str | None]


async def narrow_calls(mcp: McpTransport) -> list[Expected]:
    await mcp.get_memory_index()
    await mcp.list_prefix("user", "notes")
    return [
        ("get_memory_index", "user", None, None, None),  # one event per scope
        ("list_prefix", "user", "notes", None, None),
    ]


async def file_calls(mcp: McpTransport) -> list[Expected]:
    name = f"tea{len((await mcp.list_prefix('user', 'notes')).entries)}"
    made = await mcp.write_file(
        "user",
        "notes",
        name,
        content="- [stated] oolong\n",
        description="",
        aliases=[],
        expected_version=None,
    )
    read = await mcp.read_file("user", "notes", name)
    return [
        ("list_prefix", "user", "notes", None, None),
        ("write_file", "user", "notes", name, made.version),
        ("read_file", "user", "notes", name, read.version),
    ]


Calls = Callable[[McpTransport], Awaitable[list[Expected]]]


@pytest.mark.parametrize(
    "order",
    [(narrow_calls, file_calls), (file_calls, narrow_calls)],
    ids=["narrow-first", "file-first"],
)
async def test_every_event_names_its_own_call(
    tmp_path: Path, order: tuple[Calls, Calls]
) -> None:
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'audit.db'}",
        "WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json"),
    }
    token, _ = create_token(
        tmp_path / "tokens.json", parse_grants(["user=alice:owner"]), label="agent"
    )
    with running_servers(1, tmp_path, settings=settings) as (server,):
        expected: list[Expected] = []
        async with mcp_transport(server.url, token) as mcp:
            for calls in order:
                expected += await calls(mcp)
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=server.url, headers=auth) as http:
            answer = await http.get("/v1/audit")
            assert answer.status_code == 200, answer.text
            events = answer.json()["events"]

    recorded = [
        (e["operation"], e["scope"], e["area"], e["name"], e["version"])
        for e in reversed(events)
        if e["surface"] == "mcp"
    ]
    assert recorded == expected
