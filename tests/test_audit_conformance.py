"""Every surface x every operation: exactly one audit event, with the right fields.

One script of the seven operations (and one refused call) runs through the
typed client (HTTP) and a real MCP session against one served app on SQLite;
the operator tasks run through the task runner on the same database. Each
caller then reads its own events back, and they must be exactly the table:
one event per call, in call order, with the surface, actor, token id,
operation, location, outcome, version and files of that call.
"""

from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from wenchang_client import AsyncMemoryClient, AuditEvent, NotFoundError

from app.features.audit.schemas import AuditEvents
from app.features.memory.schemas import MemoryExport
from app.server.asgi import build_app
from app.server.auditing import audited_operation
from app.server.mcp.server import served_tools as mcp_tools
from app.server.routes import api_routes
from app.server.settings import Settings
from app.server.tasks import build_task_runner, tasks
from app.server.tools import tools
from app.shared.identity import Grant, Identity
from tests.mcp_support import http_session, request_id
from tests.support.client_transport import ClientTransport
from tests.support.transport_conformance import Transport
from tests.support.transports import TokenRegistry, mcp_transport, serve_in_thread

type Row = tuple[str, str, str | None, str | None, str | None, list[str]]
"""(operation, outcome, area, name, version, files) of one expected event."""


@dataclass(frozen=True, slots=True)
class Served:
    url: str
    tokens: TokenRegistry
    settings: Settings


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    settings = Settings(
        storage=f"sqlite:///{tmp_path / 'wenchang.db'}",
        tokens_file=str(tmp_path / "tokens.json"),
        cursor_secret="audit-conformance-cursor",
        index_cache="none",
    )
    tokens = TokenRegistry()
    with serve_in_thread(build_app(settings, resolver=tokens)) as url:
        yield Served(url, tokens, settings)


def holder(served: Served, entity: str) -> tuple[str, Identity]:
    identity = Identity(
        {"user": Grant(entity, "owner")},
        label=f"{entity}-agent",
        token_id=f"tok_{entity}",
    )
    return served.tokens.issue(identity), identity


@asynccontextmanager
async def client_of(served: Served, token: str) -> AsyncGenerator[AsyncMemoryClient]:
    async with AsyncMemoryClient(served.url, token=token) as client:
        yield client


async def seven_operations(t: Transport) -> list[Row]:
    """Every memory operation once, then a refused read; the rows they must leave."""
    created = await t.write_file(
        "user",
        "notes",
        "tea",
        content="- [stated] green\n",
        description="Tea",
        aliases=[],
        expected_version=None,
    )
    read = await t.read_file("user", "notes", "tea")
    listing = await t.list_prefix("user", "notes")
    index = await t.get_memory_index()
    appended = await t.append_line(
        "user", "notes", "tea", line="- [stated] oolong", expected_version=read.version
    )
    replaced = await t.replace_fact(
        "user",
        "notes",
        "tea",
        old_string="green",
        new_string="white",
        expected_version=appended.version,
    )
    await t.delete_file("user", "notes", "tea", expected_version=replaced.version)
    with pytest.raises(NotFoundError):
        await t.read_file("user", "notes", "tea")
    assert (
        [e.name for e in listing.entries] == [e.name for e in index.entries] == ["tea"]
    )
    return [
        ("write_file", "ok", "notes", "tea", created.version, []),
        ("read_file", "ok", "notes", "tea", read.version, []),
        ("list_prefix", "ok", "notes", None, None, ["notes/tea"]),
        ("get_memory_index", "ok", None, None, None, ["notes/tea"]),
        ("append_line", "ok", "notes", "tea", appended.version, []),
        ("replace_fact", "ok", "notes", "tea", replaced.version, []),
        ("delete_file", "ok", "notes", "tea", replaced.version, []),
        ("read_file", "MEMORY_NOT_FOUND", "notes", "tea", None, []),
    ]


def rows(events: list[AuditEvent]) -> list[Row]:
    """Oldest first, as the calls were made."""
    return [
        (e.operation, e.outcome, e.area, e.name, e.version, e.files)
        for e in reversed(events)
    ]


def assert_caller(events: list[AuditEvent], surface: str, identity: Identity) -> None:
    for event in events:
        assert (event.surface, event.actor, event.token_id, event.scope) == (
            surface,
            identity.label,
            identity.token_id,
            "user",
        )
        assert event.request_id and event.files_omitted == 0


async def test_every_client_call_over_http_is_one_event(served: Served) -> None:
    """The typed client's seven operations and one refusal: eight http events."""
    token, identity = holder(served, "via-http")
    async with client_of(served, token) as client:
        expected = await seven_operations(ClientTransport(client))

        page = await client.read_audit()
        again = await client.read_audit(operation="read_audit")

    assert rows(page.events) == expected
    assert_caller(page.events, "http", identity)
    assert [e.operation for e in again.events] == ["read_audit"]


async def test_every_mcp_tool_call_is_one_event(served: Served) -> None:
    """The same script as MCP tool calls: eight mcp events, nothing else."""
    token, identity = holder(served, "via-mcp")
    async with mcp_transport(served.url, token) as session:
        expected = await seven_operations(session)
    async with client_of(served, token) as client:
        page = await client.read_audit()

    assert rows(page.events) == expected
    assert_caller(page.events, "mcp", identity)


async def test_an_mcp_call_the_tool_schema_refuses_is_one_event(
    served: Served,
) -> None:
    """Arguments the input schema refuses (`invalid_input`, before the operation
    runs) leave one VALIDATION_ERROR event, as the same refusal does on HTTP."""
    token, identity = holder(served, "via-mcp-invalid")
    async with http_session(served.url, token) as session:
        refused = await session.call_tool(
            "append_line",
            {"scope": "user", "area": "notes", "name": "tea", "line": 5},
        )
    async with client_of(served, token) as client:
        page = await client.read_audit()

    content: dict[str, Any] = refused.structured_content or {}
    error = content["error"]
    assert refused.is_error is True and error["kind"] == "invalid_input"
    assert rows(page.events) == [
        ("append_line", "VALIDATION_ERROR", "notes", "tea", None, [])
    ]
    assert_caller(page.events, "mcp", identity)
    assert page.events[0].request_id == request_id(refused)


async def test_every_task_run_is_one_event(served: Served) -> None:
    """Each operator task run is one task event on the entity it named."""
    entity: dict[str, Any] = {"scope": "user", "entity_id": "via-task"}
    runner = build_task_runner(served.settings)
    exported = await runner.run("memory.export", input=entity)
    document = MemoryExport.model_validate(exported).model_dump()
    await runner.run("memory.import", input=document | {"mode": "skip"})
    await runner.run("memory.invalidate_index", input=entity)
    await runner.run("memory.purge", input=entity | {"dry_run": True})
    await runner.run("memory.audit", input=entity)

    answer = await runner.run("memory.audit", input=entity)

    events = AuditEvents.model_validate(answer).events
    assert [e.operation for e in reversed(events)] == [
        "memory.export",
        "memory.import",
        "memory.invalidate_index",
        "memory.purge",
        "memory.audit",
    ]
    for event in events:
        assert (event.surface, event.actor, event.token_id, event.scope) == (
            "task",
            "task",
            None,
            "user",
        )
        assert (event.outcome, event.area, event.name, event.files) == (
            "ok",
            None,
            None,
            [],
        )


async def test_a_refused_mutation_is_recorded_with_its_error_code(
    served: Served,
) -> None:
    """Writes into system/ and a stale version are events with their codes."""
    token, _ = holder(served, "refused")
    async with client_of(served, token) as client:
        for call in (
            client.write_file(
                "user",
                "system",
                "x",
                content="",
                description="",
                aliases=[],
                expected_version=None,
            ),
            client.delete_file("user", "notes", "gone", expected_version="v0"),
        ):
            with pytest.raises(Exception):  # noqa: B017 - the code is checked below
                await call

        page = await client.read_audit()

    assert [(e.operation, e.outcome) for e in reversed(page.events)] == [
        ("write_file", "RESTRICTED_SCOPE"),
        ("delete_file", "MEMORY_NOT_FOUND"),
    ]
    assert all(e.version is None for e in page.events)


def test_the_audit_log_is_not_an_mcp_tool() -> None:
    """Agents cannot read the audit log: no tool names it."""
    assert not [b.tool.name for b in tools if "audit" in b.tool.name]


def test_every_served_operation_records_its_calls() -> None:
    """Every API route, MCP tool and task is served through the audit wrapper.

    An operation added later is audited by being bound with ``bind`` (HTTP) and
    served through the tool group and task group; this fails if one is not.
    """
    served_tools = mcp_tools(Settings(storage="memory://"), purpose="Memory.")
    unaudited = [
        r.contract.name for r in api_routes if not audited_operation(r.use_case)
    ]
    unaudited += [
        b.tool.name for b in served_tools if not audited_operation(b.use_case)
    ]
    unaudited += [t.name for t in tasks if not audited_operation(t.use_case)]

    assert unaudited == []
    assert audited_operation(next(iter(tasks)).use_case) == next(iter(tasks)).name
