"""Tool-MCP over streamable HTTP: the real server on loopback, a real MCP client."""

import json
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.mcp.telemetry import ToolCallRecord
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests import mcp_scenarios as scenarios
from tests.mcp_support import FILE_CAP, GRANTS, http_session, ok, refused, serve

LABEL = "claude-desktop"


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    token: str
    unlabelled_token: str
    records: list[ToolCallRecord]


def settings_for(tmp: Path, **values: Any) -> Settings:
    return Settings(
        storage="memory://",
        tokens_file=str(tmp / "tokens.json"),
        max_file_bytes=256,
        max_files_per_entity=FILE_CAP,
        list_page_size=2,
        write_roles={"team": ["admin"]},
        **values,
    )


def tokens(tmp: Path) -> tuple[str, str]:
    path = tmp / "tokens.json"
    labelled, _ = create_token(path, parse_grants(GRANTS.split(",")), label=LABEL)
    plain, _ = create_token(path, parse_grants(["user=bob:owner"]))
    return labelled, plain


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("mcp-http")
    token, plain = tokens(tmp)
    records: list[ToolCallRecord] = []
    app = build_app(settings_for(tmp), on_call=(records.append,))
    with serve(app) as url:
        yield Server(url, token, plain, records)


def raw_post(server: Server, **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"accept": "application/json, text/event-stream"}
    return httpx.post(f"{server.url}/mcp", json=body, headers=accept | headers)


def test_mcp_http_answers_401_without_a_bearer_token(server: Server) -> None:
    """No token: HTTP 401 with WWW-Authenticate: Bearer and the §4 payload."""
    response = raw_post(server)

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    body = response.json()
    assert body["code"] == "UNAUTHORIZED"
    assert body["details"]["error"] == "ResolverFailureError"
    assert body["details"]["category"] == "permanent"


def test_mcp_http_answers_401_to_an_unknown_token(server: Server) -> None:
    """A token the file does not hold never reaches the MCP layer."""
    response = raw_post(server, authorization="Bearer wct_not-a-token")

    assert response.status_code == 401
    assert "not valid" in response.json()["message"]


def test_mcp_http_answers_401_to_any_method(server: Server) -> None:
    """The guard covers every method on /mcp, not only POST."""
    response = httpx.get(f"{server.url}/mcp")

    assert response.status_code == 401


def test_mcp_http_refuses_a_host_outside_the_allow_list(server: Server) -> None:
    """DNS-rebinding protection: an authenticated request for another Host gets 421."""
    response = raw_post(
        server, authorization=f"Bearer {server.token}", host="evil.test"
    )

    assert response.status_code == 421


def test_mcp_http_refuses_an_origin_outside_the_allow_list(server: Server) -> None:
    """A browser Origin that is not allowed gets 403."""
    response = raw_post(
        server, authorization=f"Bearer {server.token}", origin="https://evil.test"
    )

    assert response.status_code == 403


TOOL_SENTENCE = re.compile(r"(\w+) (?:memory )?tools[^:]*, in this order: ([^.]+)\.")
NUMBERS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]
ROOT = Path(__file__).parents[1]


async def test_the_docs_count_and_order_the_tools_as_the_server_lists_them(
    server: Server,
) -> None:
    """README and docs/mcp.md name every tool ``tools/list`` serves, in its order,
    and their number in words."""
    async with http_session(server.url, server.token) as session:
        served = [tool.name for tool in (await session.list_tools()).tools]

    for page in ("README.md", "docs/mcp.md"):
        found = TOOL_SENTENCE.search((ROOT / page).read_text())
        assert found is not None, page
        count, names = found.groups()
        assert re.findall(r"`(\w+)`", names) == served, page
        assert NUMBERS.index(count.lower()) == len(served), page


FILE_TOOLS = re.compile(r"after the (\w+) file tools")


async def test_every_page_counts_the_file_tools_as_the_server_lists_them(
    server: Server,
) -> None:
    """Where a page says a tool comes "after the N file tools", N is how many
    ``tools/list`` serves before ``search_memory`` (the first tool after them)."""
    async with http_session(server.url, server.token) as session:
        served = [tool.name for tool in (await session.list_tools()).tools]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

    claims = {
        page.name: FILE_TOOLS.findall(" ".join(page.read_text().split()))
        for page in pages
    }

    assert claims["search.md"] and claims["history.md"]
    for page, counts in claims.items():
        for count in counts:
            assert NUMBERS.index(count.lower()) == served.index("search_memory"), page


async def test_mcp_http_lists_the_tools_in_order(server: Server) -> None:
    """Names and order: the eight file tools, then search and the history tools;
    schemas and annotations come from the tools."""
    async with http_session(server.url, server.token) as session:
        listed = (await session.list_tools()).tools

    assert [tool.name for tool in listed] == [
        "get_memory_index",
        "read_file",
        "list_prefix",
        "write_file",
        "append_line",
        "replace_fact",
        "delete_file",
        "rename_file",
        "search_memory",
        "list_versions",
        "read_version",
        "restore_version",
    ]
    by_name = {tool.name: tool for tool in listed}
    hints = {
        name: (
            tool.annotations.read_only_hint,
            tool.annotations.destructive_hint,
            tool.annotations.open_world_hint,
        )
        for name, tool in by_name.items()
        if tool.annotations is not None
    }
    assert hints == {
        "get_memory_index": (True, False, False),
        "read_file": (True, False, False),
        "list_prefix": (True, False, False),
        "write_file": (False, True, False),
        "append_line": (False, False, False),
        "replace_fact": (False, True, False),
        "delete_file": (False, True, False),
        "rename_file": (False, True, False),
        "search_memory": (True, False, False),
        "list_versions": (True, False, False),
        "read_version": (True, False, False),
        "restore_version": (False, True, False),
    }
    write = by_name["write_file"].input_schema
    assert set(write["required"]) == {
        "scope",
        "area",
        "name",
        "content",
        "description",
        "aliases",
        "expected_version",
    }
    assert set(by_name["get_memory_index"].input_schema["properties"]) == {
        "include_expired"
    }
    assert set(by_name["append_line"].input_schema["required"]) == {
        "scope",
        "area",
        "name",
        "line",
        "expected_version",
    }
    description = by_name["get_memory_index"].description or ""
    assert description.startswith("You have durable memory")


async def test_mcp_http_serves_the_prompt_as_instructions_and_resource(
    server: Server,
) -> None:
    """The memory prompt is the instructions and `wenchang://memory-prompt`."""
    async with http_session(server.url, server.token) as session:
        instructions = session.instructions
        resources = (await session.list_resources()).resources
        read = await session.read_resource("wenchang://memory-prompt")

    assert instructions is not None and instructions.startswith("## Memory\n\n")
    [resource] = resources
    assert (resource.name, resource.mime_type) == ("memory_prompt", "text/markdown")
    [content] = read.contents
    assert getattr(content, "text", None) == instructions
    assert content.mime_type == "text/markdown"


Check = Callable[[Client, str], Awaitable[None]]
CHECKS: dict[str, Check] = {
    "get_memory_index": scenarios.check_get_memory_index,
    "read_file": scenarios.check_read_file,
    "list_prefix": scenarios.check_list_prefix,
    "append_line": scenarios.check_append_line,
    "replace_fact": scenarios.check_replace_fact,
    "delete_file": scenarios.check_delete_file,
    "agent_session": scenarios.scripted_agent_session,
}


@pytest.mark.parametrize("name", CHECKS)
async def test_mcp_http_tool_behaves_and_reports_every_error(
    server: Server, name: str
) -> None:
    """Each tool's results and error envelopes over HTTP (see tests/mcp_scenarios)."""
    async with http_session(server.url, server.token) as session:
        await CHECKS[name](session, f"http-{name.replace('_', '-')}")


async def test_mcp_http_write_file_records_the_token_label(server: Server) -> None:
    """write_file over HTTP: its errors, and `sources` holds the token's label."""
    async with http_session(server.url, server.token) as session:
        await scenarios.check_write_file(session, "http-write-file", LABEL)


async def test_mcp_http_write_without_a_label_records_mcp(server: Server) -> None:
    """An unlabelled token's writes are recorded as the `mcp` surface."""
    async with http_session(server.url, server.unlabelled_token) as session:
        created = await scenarios.create(session, "http-plain", "note")

    assert created["sources"] == ["mcp"]


async def test_mcp_http_file_quota_is_reported(server: Server) -> None:
    """Past max_files_per_entity, a create is FileQuotaExceededError with limit."""
    async with http_session(server.url, server.token) as session:
        await scenarios.check_file_quota(session)


async def test_mcp_http_unknown_tool_is_an_error_result(server: Server) -> None:
    """Calling a tool that does not exist returns isError, not a crash."""
    async with http_session(server.url, server.token) as session:
        await scenarios.check_unknown_tool(session)


async def test_mcp_http_shares_storage_with_the_http_api(server: Server) -> None:
    """A file written over MCP is the same file the HTTP API reads (one storage)."""
    async with http_session(server.url, server.token) as session:
        created = await scenarios.create(session, "http-shared", "same")

    async with httpx.AsyncClient(base_url=server.url) as http:
        response = await http.get(
            "/v1/files/user/http-shared/same",
            headers={"authorization": f"Bearer {server.token}"},
        )

    assert response.status_code == 200
    assert response.json() == created


async def test_mcp_http_reports_every_call_to_on_call(server: Server) -> None:
    """One read-only record per call: tool, arguments, envelope, error, id, time."""
    async with http_session(server.url, server.token) as session:
        before = len(server.records)
        await scenarios.create(session, "http-telemetry", "t")
        await session.call_tool(
            "read_file", {"scope": "user", "area": "http-telemetry", "name": "none"}
        )
        records = server.records[before:]

    write, read = records
    assert (write.tool, write.is_error, write.error_code) == ("write_file", False, None)
    assert write.arguments["name"] == "t"
    assert write.result["ok"] is True
    assert (read.tool, read.is_error, read.error_code) == (
        "read_file",
        True,
        "MEMORY_NOT_FOUND",
    )
    assert read.result["error"]["details"]["reason"] == "file_absent"
    assert write.request_id and read.request_id != write.request_id
    assert write.duration_s >= 0
    with pytest.raises(TypeError):
        write.arguments["name"] = "changed"  # pyright: ignore[reportIndexIssue]
    with pytest.raises(AttributeError):
        write.result["result"]["aliases"].append("changed")


async def test_mcp_http_observers_cannot_change_what_the_client_receives(
    tmp_path: Path,
) -> None:
    """An observer that tries to edit the record's result changes nothing sent."""
    token, _ = tokens(tmp_path)

    def meddling(record: ToolCallRecord) -> None:
        record.result["result"]["entries"].append({"name": "forged"})

    app = build_app(settings_for(tmp_path), on_call=(meddling,))
    with serve(app) as url:
        async with http_session(url, token) as session:
            await scenarios.create(session, "meddled", "kept")
            result = await session.call_tool("get_memory_index", {})

    names = [entry["name"] for entry in ok(result)["entries"]]
    assert names == ["kept"]


async def test_mcp_http_survives_a_failing_observer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An on_call observer that raises is logged; the client gets its result."""
    token, _ = tokens(tmp_path)

    def broken(record: ToolCallRecord) -> None:
        raise RuntimeError("observer bug")

    app = build_app(settings_for(tmp_path), on_call=(broken,))
    with serve(app) as url:
        async with http_session(url, token) as session:
            result = await session.call_tool("get_memory_index", {})

    assert ok(result)["entries"] == []
    assert "on_call observer failed for get_memory_index" in caplog.text


async def test_the_memory_surface_fits_its_context_budget(server: Server) -> None:
    """What a model reads (instructions, every tool's description and input
    schema) stays within 28,000 characters with every tool listed."""
    async with http_session(server.url, server.token) as session:
        instructions = session.instructions or ""
        listed = (await session.list_tools()).tools

    size = len(instructions) + sum(
        len(tool.description or "") + len(json.dumps(tool.input_schema))
        for tool in listed
    )
    assert "restore_version" in {tool.name for tool in listed}
    assert size <= 28_000, size


async def test_mcp_http_names_tools_with_the_prefix_and_product(tmp_path: Path) -> None:
    """tool_prefix renames every tool; product names itself in each first line."""
    token, _ = tokens(tmp_path)
    configured = settings_for(tmp_path, tool_prefix="acme", product="Acme")
    with serve(build_app(configured, on_call=())) as url:
        async with http_session(url, token) as session:
            listed = (await session.list_tools()).tools
            index = await session.call_tool("acme_get_memory_index", {})

    assert [tool.name for tool in listed][:2] == [
        "acme_get_memory_index",
        "acme_read_file",
    ]
    assert (listed[1].description or "").startswith("Read one Acme memory file")
    assert len(index.content) == 2


class Approver:
    """An MCP client's user: answers each approval question, and counts them."""

    def __init__(self, *, approve: bool) -> None:
        self.approve = approve
        self.questions: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        self.questions.append(params.message)
        return ElicitResult(action="accept", content={"approve": self.approve})


@pytest.fixture
def approval_server(tmp_path: Path) -> Iterator[Server]:
    token, plain = tokens(tmp_path)
    required = settings_for(tmp_path, require_approval="delete_file,append_line")
    records: list[ToolCallRecord] = []
    with serve(build_app(required, on_call=(records.append,))) as url:
        yield Server(url, token, plain, records)


async def test_mcp_http_approval_runs_an_approved_delete(
    approval_server: Server,
) -> None:
    """A tool in require_approval runs once the client's user approves the call."""
    approver = Approver(approve=True)
    async with http_session(
        approval_server.url, approval_server.token, elicitation=approver
    ) as session:
        created = await scenarios.create(session, "approved", "x")
        deleted = await scenarios.delete(session, "approved", "x", created["version"])

    assert ok(deleted) == {"ok": True}
    assert approver.questions == [
        "Allow the agent to call delete_file on the memory file at scope user, "
        "area approved, name x?"
    ]


async def test_mcp_http_approval_declined_changes_nothing(
    approval_server: Server,
) -> None:
    """A declined approval is approval_denied, and the file stays."""
    async with http_session(
        approval_server.url, approval_server.token, elicitation=Approver(approve=False)
    ) as session:
        created = await scenarios.create(session, "declined", "x")
        denied = await scenarios.delete(session, "declined", "x", created["version"])
        appended = await scenarios.append(
            session, "declined", "x", "- [stated] y", created["version"]
        )
        kept = await session.call_tool(
            "read_file", {"scope": "user", "area": "declined", "name": "x"}
        )

    assert "did not approve" in refused(denied, "approval_denied")
    refused(appended, "approval_denied")
    assert ok(kept) == created


async def test_mcp_http_approval_needs_a_client_that_can_ask(
    approval_server: Server,
) -> None:
    """Without elicitation support, listed tools are refused: approval_required."""
    async with http_session(approval_server.url, approval_server.token) as session:
        created = await scenarios.create(session, "no-approver", "x")
        result = await scenarios.delete(session, "no-approver", "x", created["version"])

    assert "cannot be asked" in refused(result, "approval_required")
    assert approval_server.records[-1].error_code == "approval_required"


async def test_mcp_http_approval_cannot_reach_a_handshake_era_client(
    approval_server: Server,
) -> None:
    """Stateless HTTP has no back channel for a legacy client: approval_required."""
    approver = Approver(approve=True)
    async with http_session(
        approval_server.url, approval_server.token, elicitation=approver, mode="legacy"
    ) as session:
        created = await scenarios.create(session, "legacy", "x")
        result = await scenarios.delete(session, "legacy", "x", created["version"])

    refused(result, "approval_required")
    assert approver.questions == []


async def test_mcp_http_approval_is_not_asked_for_invalid_input(
    approval_server: Server,
) -> None:
    """Input that fails the schema is rejected before anyone is asked."""
    approver = Approver(approve=True)
    async with http_session(
        approval_server.url, approval_server.token, elicitation=approver
    ) as session:
        result = await session.call_tool("delete_file", {"scope": "user"})

    refused(result, "invalid_input")
    assert approver.questions == []


async def test_mcp_http_approval_leaves_other_writes_alone(
    approval_server: Server,
) -> None:
    """Tools not listed in require_approval run without asking."""
    approver = Approver(approve=False)
    async with http_session(
        approval_server.url, approval_server.token, elicitation=approver
    ) as session:
        created = await scenarios.create(session, "unlisted", "x")
        replaced = await scenarios.replace(
            session, "unlisted", "x", "green", "black", created["version"]
        )

    assert "black tea" in ok(replaced)["content"]
    assert approver.questions == []


async def test_mcp_http_serves_again_after_a_restart_of_the_same_app(
    tmp_path: Path,
) -> None:
    """One app object can run its lifespan twice (a session manager runs once)."""
    token, _ = tokens(tmp_path)
    app = build_app(settings_for(tmp_path), on_call=())
    answers: list[Any] = []

    for _ in range(2):
        with serve(app) as url:
            async with http_session(url, token) as session:
                answers.append(ok(await session.call_tool("get_memory_index", {})))

    assert answers == [{"entries": [], "capped": []}] * 2


def test_mcp_http_spends_the_token_rate_limit(tmp_path: Path) -> None:
    """/mcp shares the API's per-token rate limit: past it, 429 + Retry-After."""
    token, _ = tokens(tmp_path)
    limited = settings_for(tmp_path, rate_limit=2, rate_limit_window=3600)
    with serve(build_app(limited, on_call=())) as url:
        local = Server(url, token, "", [])
        statuses = [
            raw_post(local, authorization=f"Bearer {token}").status_code
            for _ in range(3)
        ]
        refusal = raw_post(local, authorization=f"Bearer {token}")

    assert statuses == [200, 200, 429]
    assert refusal.json()["code"] == "RATE_LIMITED"
    assert "retry-after" in refusal.headers
