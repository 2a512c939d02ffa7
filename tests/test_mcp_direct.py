"""A plain tool call answered directly (`mcp_direct`) gets the SDK kernel's answer.

The same conversation — every tool, success and every kind of failure, requests
the direct path leaves to the SDK — runs against two apps built alike from the
same token file: one with the fast paths on (plain calls answered directly),
one with ``WENCHANG_FAST_PATHS=off``, where the SDK's transport and Tenchi's
server answer everything (the declared path). Each response's status,
headers and body must be the same bytes, once versions (random per app) are
numbered by first appearance and timestamps and cursors (which carry a
version) blanked.
"""

import json
import re
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import httpx
import pytest
from tenchi.testing import open_http

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.fast.mcp_direct import DirectCalls
from app.server.settings import Settings
from app.shared.identity import Grant
from tests.support.storage_adapters import storage_url_for_tests

JSON_OR_SSE = "application/json, text/event-stream"
HANDSHAKE_VERSION = "2025-11-25"
TEA = "- [stated] Prefers green tea\n"
VERSION = re.compile(rb"\b[0-9a-f]{20}\b")
CURSOR = re.compile(rb"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{8,}")
TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")

Versions = dict[str, str]
Body = Callable[[Versions], Any]


def call(tool: str, **arguments: Any) -> Body:
    return lambda _: {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def edit(tool: str, name: str, **arguments: Any) -> Body:
    """A call on `notes/<name>` with the file's current version as expected."""
    where = {"scope": "user", "area": "notes", "name": name}
    return lambda seen: call(
        tool, **where, **arguments, expected_version=seen.get(name)
    )(seen)


def raw(message: Any) -> Body:
    return lambda _: message


def write(name: str, content: str = TEA) -> Body:
    return edit(
        "write_file", name, content=content, description="Drinks", aliases=["tea"]
    )


READ = {"scope": "user", "area": "notes", "name": "tea"}
CONVERSATION: list[tuple[str, Body]] = [
    ("alice", write("tea")),
    ("alice", write("tea", "- [stated] Likes oolong\n")),
    ("alice", call("read_file", **READ)),
    ("alice", call("read_file", scope="user", area="notes", name="nothing")),
    ("alice", call("read_file", scope="user", area="notes", name="a/b")),
    ("alice", call("read_file", scope="user", area="notes")),
    ("alice", call("read_file", **READ, extra=1)),
    ("alice", call("read_file", scope=3, area="notes", name="tea")),
    ("bob", call("read_file", **READ)),
    ("alice", call("read_file", scope="team", area="notes", name="tea")),
    ("alice", edit("append_line", "tea", line="- [stated] Takes no sugar")),
    (
        "alice",
        call("append_line", **READ, line="- [stated] Milk", expected_version="0" * 20),
    ),
    (
        "alice",
        call(
            "write_file",
            **READ,
            content=TEA,
            description="D",
            aliases=[],
            expected_version=None,
        ),
    ),
    ("alice", edit("append_line", "tea", line="- [stated] " + "long " * 20)),
    ("alice", edit("replace_fact", "tea", old_string="oolong", new_string="sencha")),
    ("alice", edit("replace_fact", "tea", old_string="coffee", new_string="tea")),
    ("alice", edit("write_file", "tea", content=TEA, description="D", aliases=[])),
    ("alice", write("coffee")),
    # The index tool's text is written by pydantic-core where it writes what
    # json.dumps would (non-ASCII escaped), by json.dumps where not (DEL).
    ("alice", edit("write_file", "chai", content=TEA, description="Thé 🍵 “x”")),
    ("alice", edit("write_file", "mate", content=TEA, description="Mate \x7f")),
    ("alice", call("write_file", **READ, content=TEA, description="D")),
    (
        "alice",
        call(
            "write_file",
            scope="team",
            area="notes",
            name="tea",
            content=TEA,
            description="D",
            aliases=[],
            expected_version=None,
        ),
    ),
    ("alice", call("list_prefix", scope="user", area="notes")),
    ("alice", call("list_prefix", scope="user")),
    ("alice", call("list_prefix", scope="user", cursor="nonsense")),
    ("alice", call("get_memory_index")),
    ("bob", call("get_memory_index")),
    ("alice", call("search_memory", query="sencha")),
    ("alice", call("list_versions", **READ)),
    ("alice", call("read_version", **READ, version="0" * 20)),
    ("alice", edit("delete_file", "coffee")),
    ("alice", call("no_such_tool")),
    ("nobody", call("read_file", **READ)),
    ("alice", raw({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}})),
    (
        "alice",
        raw(
            {
                "jsonrpc": "2.0",
                "id": "s",
                "method": "tools/call",
                "params": {"name": "read_file", "arguments": READ, "_meta": {}},
            }
        ),
    ),
    (
        "alice",
        raw(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "read_file", "arguments": ["user"]},
            }
        ),
    ),
    ("alice", raw({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}})),
    ("alice", raw({"jsonrpc": "2.0", "method": "notifications/initialized"})),
    ("alice", raw([{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}])),
]


@dataclass
class Conversation:
    """One app's answers, normalised, and the versions it handed out."""

    answers: list[tuple[int, dict[str, str], bytes]] = field(
        default_factory=list[tuple[int, dict[str, str], bytes]]
    )
    audit: list[bytes] = field(default_factory=list[bytes])
    versions: Versions = field(default_factory=Versions)


def normalised(body: bytes) -> bytes:
    numbers: dict[bytes, bytes] = {}

    def number(match: re.Match[bytes]) -> bytes:
        return numbers.setdefault(match[0], b"v%d" % len(numbers))

    return CURSOR.sub(b"C", TIMESTAMP.sub(b"T", VERSION.sub(number, body)))


def remember(seen: Versions, response: httpx.Response) -> None:
    try:
        result = response.json()["result"]["structuredContent"]["result"]
    except (ValueError, KeyError, TypeError):
        return
    if isinstance(result, dict) and "version" in result and "name" in result:
        found = cast(dict[str, Any], result)
        seen[str(found["name"])] = str(found["version"])


@asynccontextmanager
async def served(
    root: Path, tokens: Path, fast_paths: Literal["on", "off"]
) -> AsyncGenerator[httpx.AsyncClient]:
    settings = Settings(
        fast_paths=fast_paths,
        storage=storage_url_for_tests(root),
        tokens_file=str(tokens),
        index_cache="none",
        list_page_size=2,
        max_file_bytes=64,
        write_roles={"team": ["owner", "admin"]},
    )
    app = build_app(settings, resolver=TokenFileResolver(tokens))
    async with open_http(app) as http:
        yield http


async def converse(http: httpx.AsyncClient, bearers: dict[str, str]) -> Conversation:
    done = Conversation()
    for step, (holder, body) in enumerate(CONVERSATION):
        headers = {
            "authorization": f"Bearer {bearers[holder]}",
            "accept": JSON_OR_SSE,
            "host": "127.0.0.1:8000",
            "mcp-protocol-version": HANDSHAKE_VERSION,
            "x-request-id": f"step-{step}",
        }
        response = await http.post("/mcp", json=body(done.versions), headers=headers)
        remember(done.versions, response)
        kept = {k: v for k, v in response.headers.items() if k != "content-length"}
        done.answers.append((response.status_code, kept, normalised(response.content)))
    for holder in ("alice", "bob"):
        done.audit += await audit_trail(http, bearers[holder])
    return done


async def audit_trail(http: httpx.AsyncClient, bearer: str) -> list[bytes]:
    """Every event of the caller's audit log, normalised, in a stable order
    (events of one instant may come in either order)."""
    events: list[bytes] = []
    query: dict[str, str] = {}
    while True:
        headers = {"authorization": f"Bearer {bearer}", "x-request-id": "audit"}
        answer = await http.get("/v1/audit", params=query, headers=headers)
        assert answer.status_code == 200, answer.text
        page = answer.json()
        events += [normalised(json.dumps(event).encode()) for event in page["events"]]
        if not page.get("next_cursor"):
            return sorted(events)
        query = {"cursor": page["next_cursor"]}


@pytest.fixture
def direct_answers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The tools the direct path answered while the test ran."""
    answered: list[str] = []
    original = DirectCalls.call

    async def counted(self: DirectCalls, *args: Any) -> Any:
        result = await original(self, *args)
        if result is not None:
            answered.append(str(args[1]))
        return result

    monkeypatch.setattr(DirectCalls, "call", counted)
    yield answered


async def test_direct_answers_are_the_sdk_answers(
    tmp_path: Path, direct_answers: list[str]
) -> None:
    tokens = tmp_path / "tokens.json"
    alice = {"user": Grant("alice", "owner"), "team": Grant("t-1", "member")}
    bob = {"user": Grant("bob", "owner"), "team": Grant("t-1", "admin")}
    bearers = {
        "alice": create_token(tokens, alice)[0],
        "bob": create_token(tokens, bob)[0],
        "nobody": "wct_not-a-token",
    }
    (tmp_path / "direct").mkdir()
    (tmp_path / "sdk").mkdir()
    async with served(tmp_path / "direct", tokens, "on") as http:
        direct = await converse(http, bearers)
    answered = list(direct_answers)
    async with served(tmp_path / "sdk", tokens, "off") as http:
        sdk = await converse(http, bearers)

    assert len(direct_answers) == len(answered), "the SDK run took the direct path"
    assert {"read_file", "write_file", "append_line", "get_memory_index"} <= set(
        answered
    )
    for step, (ours, theirs) in enumerate(
        zip(direct.answers, sdk.answers, strict=True)
    ):
        assert ours == theirs, f"step {step}:\n{ours}\n{theirs}"
    assert len(direct.answers) == len(CONVERSATION) == len(sdk.answers)
    assert direct.audit == sdk.audit
    assert len(direct.audit) > len(CONVERSATION) // 2
