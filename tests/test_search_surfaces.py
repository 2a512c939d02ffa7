"""search_memory on the agent surface (real MCP over HTTP), the typed client and
the memory prompt; and the size of everything a model reads of the surface."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from wenchang_client import InvalidArgumentError

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.mcp.prompt import PromptSlots, build_memory_prompt
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import failed, http_session, ok, serve
from tests.support.in_process_client import open_in_process_client

SURFACE_BUDGET = 28_000
"""Characters of instructions, tool descriptions and input schemas together."""


def settings_for(tmp: Path) -> Settings:
    return Settings(storage="memory://", tokens_file=str(tmp / "tokens.json"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("mcp-search")
    token, _ = create_token(tmp / "tokens.json", parse_grants(["user=alice:owner"]))
    with serve(build_app(settings_for(tmp))) as url:
        yield url, token


async def test_search_is_listed_right_after_the_operations_and_read_only(
    served: tuple[str, str],
) -> None:
    async with http_session(*served) as session:
        listed = (await session.list_tools()).tools
    names = [tool.name for tool in listed]
    assert names.index("search_memory") == 8
    search = listed[8]
    assert search.annotations is not None
    assert search.annotations.read_only_hint is True
    assert search.input_schema["required"] == ["query"]


async def test_the_memory_surface_fits_its_budget(served: tuple[str, str]) -> None:
    async with http_session(*served) as session:
        listed = (await session.list_tools()).tools
        instructions = session.instructions or ""
    size = len(instructions) + sum(
        len(tool.description or "") + len(json.dumps(tool.input_schema))
        for tool in listed
    )
    assert size <= SURFACE_BUDGET


async def test_an_agent_finds_a_file_by_its_content(served: tuple[str, str]) -> None:
    async with http_session(*served) as session:
        written = await session.call_tool(
            "write_file",
            {
                "scope": "user",
                "area": "preferences",
                "name": "drinks",
                "content": "- [stated] Loves Dòng Đỉnh oolong.\n",
                "description": "What the user drinks",
                "aliases": [],
                "expected_version": None,
            },
        )
        ok(written)
        found = ok(await session.call_tool("search_memory", {"query": "dong dinh"}))
        refused = await session.call_tool("search_memory", {"query": " "})
    assert [hit["name"] for hit in found["hits"]] == ["drinks"]
    assert found["hits"][0]["snippet"] == "- [stated] Loves **Dòng** **Đỉnh** oolong."
    assert failed(refused, "INVALID_ARGUMENT")["argument"] == "query"


async def test_the_typed_client_searches_and_reports_bad_queries(
    tmp_path: Path,
) -> None:
    token, _ = create_token(tmp_path / "tokens.json", parse_grants(["user=a:owner"]))
    app = build_app(settings_for(tmp_path))
    async with open_in_process_client(app, token=token) as client:
        await client.write_file(
            "user",
            "notes",
            "tea",
            content="- [stated] Oolong.\n",
            description="Tea",
            aliases=["cha"],
            expected_version=None,
        )
        results = await client.search_memory("cha", limit=5)
        with pytest.raises(InvalidArgumentError) as raised:
            await client.search_memory("x" * 257)
    assert [(h.area, h.name) for h in results.hits] == [("notes", "tea")]
    assert results.next_cursor is None
    assert raised.value.argument == "query"


def test_the_prompt_sends_agents_to_search() -> None:
    prompt = build_memory_prompt(
        PromptSlots(purpose="p", scope_guidance="s", seed_areas="a")
    )
    filing = prompt.split("## Filing", 1)[1].split("##", 1)[0]
    assert "index is capped" in filing
    assert "do not know which file" in filing
    assert "`search_memory`" in filing
