"""Tool-MCP over stdio: `wenchang mcp` as a subprocess, driven by `mcp.client.stdio`."""

import subprocess
import sys
from pathlib import Path

from mcp.client.session import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from tests import mcp_scenarios as scenarios
from tests.mcp_support import GRANTS, LIMITS, ok, refused, stdio_session

EXIT_SECONDS = 60


def local_settings(tmp_path: Path, **more: str) -> dict[str, str]:
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'wenchang.db'}",
        "WENCHANG_LOCAL_IDENTITY": GRANTS,
    }
    settings.update({f"WENCHANG_{key.upper()}": value for key, value in LIMITS.items()})
    settings.update(more)
    return settings


async def test_mcp_stdio_serves_every_tool_and_every_error(tmp_path: Path) -> None:
    """Tools, prompt, resource, and every tool's results and errors over stdio."""
    async with stdio_session(tmp_path, local_settings(tmp_path)) as session:
        listed = (await session.list_tools()).tools
        read = await session.read_resource("wenchang://memory-prompt")
        await scenarios.check_get_memory_index(session, "index")
        await scenarios.check_read_file(session, "read")
        await scenarios.check_list_prefix(session, "list")
        await scenarios.check_write_file(session, "write", "mcp")
        await scenarios.check_append_line(session, "append")
        await scenarios.check_replace_fact(session, "replace")
        await scenarios.check_delete_file(session, "delete")
        await scenarios.check_file_quota(session)
        await scenarios.check_unknown_tool(session)
        instructions = session.instructions

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
    destructive = [
        tool.name
        for tool in listed
        if tool.annotations and tool.annotations.destructive_hint
    ]
    assert destructive == [
        "write_file",
        "replace_fact",
        "delete_file",
        "rename_file",
        "restore_version",
    ]
    assert set(listed[1].input_schema["required"]) == {"scope", "area", "name"}
    assert instructions is not None and instructions.startswith("## Memory\n\n")
    [content] = read.contents
    assert getattr(content, "text", None) == instructions


async def test_mcp_stdio_scripted_agent_session(tmp_path: Path) -> None:
    """index, create, append, conflict, merge and retry, replace, list, delete."""
    async with stdio_session(tmp_path, local_settings(tmp_path)) as session:
        await scenarios.scripted_agent_session(session, "coffee")


async def approve(
    context: ClientRequestContext, params: ElicitRequestParams
) -> ElicitResult | ErrorData:
    return ElicitResult(
        action="accept", content={"approve": "keep" not in params.message}
    )


async def test_mcp_stdio_asks_for_approval_on_a_handshake_era_client(
    tmp_path: Path,
) -> None:
    """A legacy (initialize) client is asked over the stdio back channel."""
    settings = local_settings(tmp_path, WENCHANG_REQUIRE_APPROVAL="delete_file")
    async with stdio_session(
        tmp_path, settings, elicitation=approve, mode="legacy"
    ) as (session):
        gone = await scenarios.create(session, "approval", "gone")
        kept = await scenarios.create(session, "approval", "keep")
        deleted = await scenarios.delete(session, "approval", "gone", gone["version"])
        denied = await scenarios.delete(session, "approval", "keep", kept["version"])

    assert ok(deleted) == {"ok": True}
    refused(denied, "approval_denied")


def test_mcp_stdio_refuses_to_start_with_an_overlong_description(
    tmp_path: Path,
) -> None:
    """Startup fails, naming the tool, and nothing reaches stdout (the protocol)."""
    wenchang = str(Path(sys.executable).parent / "wenchang")
    settings = local_settings(tmp_path, WENCHANG_PROMPT_PURPOSE="x" * 2000)

    finished = subprocess.run(
        [wenchang, "mcp"],
        cwd=tmp_path,
        env=settings,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )

    assert finished.returncode == 2
    assert finished.stdout == ""
    assert "get_memory_index" in finished.stderr
    assert "2000" in finished.stderr
