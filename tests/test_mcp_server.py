"""The MCP server in process: composition rules that need no transport."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from app.features.memory.ports import FileMetadata, Write
from app.infra.tokens.token_file_resolver import FixedResolver
from app.server.mcp.server import (
    SharedContext,
    create_memory_mcp_server,
    fixed_identity,
)
from app.server.mcp.tools import served_tools
from app.server.runtime import create_lifespan
from app.server.settings import Settings, SettingsError
from app.shared.identity import Grant, Identity, ResolutionFailure
from tests.mcp_support import failed, refused

ALICE = Identity(grants={"user": Grant(entity_id="alice", role="owner")})


def settings(tmp_path: Path, **values: Any) -> Settings:
    values.setdefault("storage", "memory://")
    values.setdefault("tokens_file", str(tmp_path / "tokens.json"))
    return Settings(**values)


class Nobody:
    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        return ResolutionFailure("no such person")


async def test_mcp_server_reports_an_unexpected_failure_as_failed_and_logs_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A body that is not UTF-8 fails generically over MCP and is logged."""
    configured = settings(tmp_path)
    shared = SharedContext()
    server = create_memory_mcp_server(
        configured,
        authenticate=fixed_identity(FixedResolver(ALICE)),
        context=shared,
        on_call=(),
    )
    meta = FileMetadata("d", (), ("mcp",), datetime(2026, 1, 1, tzinfo=UTC))

    async with shared.open(create_lifespan(configured)), Client(server) as session:
        await shared().storage.put(Write("user/alice/notes/broken.md", b"\xff", meta))
        result = await session.call_tool(
            "read_file", {"scope": "user", "area": "notes", "name": "broken"}
        )

    assert refused(result, "failed") == "The tool invocation failed."
    assert "tool read_file failed unexpectedly" in caplog.text
    assert "UnicodeDecodeError" in caplog.text


async def test_mcp_server_reports_an_outage_as_transient(tmp_path: Path) -> None:
    """A storage outage reaches the agent as BackendUnavailableError: retry."""
    database = tmp_path / "wenchang.db"
    configured = settings(tmp_path, storage=f"sqlite:///{database}", index_cache="none")
    shared = SharedContext()
    server = create_memory_mcp_server(
        configured,
        authenticate=fixed_identity(FixedResolver(ALICE)),
        context=shared,
        on_call=(),
    )

    async with shared.open(create_lifespan(configured)), Client(server) as session:
        with sqlite3.connect(database) as saboteur:
            saboteur.execute("DROP TABLE memory_objects")
        index = await session.call_tool("get_memory_index", {})
        read = await session.call_tool(
            "read_file", {"scope": "user", "area": "notes", "name": "a"}
        )

    for result in (index, read):
        details = failed(result, "BACKEND_UNAVAILABLE")
        assert (details["error"], details["category"]) == (
            "BackendUnavailableError",
            "transient",
        )
        assert details["reason"] == "unavailable"


def test_shared_context_is_unavailable_outside_the_lifespan() -> None:
    """Borrowing the context before the process starts is a clear error."""
    with pytest.raises(RuntimeError, match="lifespan has not started"):
        SharedContext()()


async def test_shared_context_is_the_lifespan_s_until_it_ends(tmp_path: Path) -> None:
    """Borrowed while the lifespan runs; after it, the same clear error."""
    shared = SharedContext()
    async with shared.open(create_lifespan(settings(tmp_path))) as runtime:
        assert shared() is runtime.context

    with pytest.raises(RuntimeError, match="lifespan has not started"):
        shared()


def test_fixed_identity_refuses_a_resolver_that_fails() -> None:
    """The stdio identity must resolve at startup, or the server does not start."""
    with pytest.raises(SettingsError, match="no such person"):
        fixed_identity(Nobody())


def test_product_must_be_one_line(tmp_path: Path) -> None:
    """A product name that spans lines would break every first line: refused."""
    with pytest.raises(SettingsError, match="WENCHANG_PRODUCT"):
        served_tools(settings(tmp_path, product="Acme\nCorp"), purpose="p")
