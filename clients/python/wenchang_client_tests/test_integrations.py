"""The extras' integrations work from the installed package alone: Claude's memory
tool and LangGraph's store against a real server."""

import pytest
from anthropic.tools import ToolError
from wenchang_client.langgraph import WenchangStore
from wenchang_client.memory_tool import WenchangMemoryTool, WenchangMemoryToolSync

from wenchang_client_tests.conftest import LiveServer


def test_the_memory_tool_creates_views_and_refuses_as_the_reference(
    live_server: LiveServer, token: str
) -> None:
    memory = WenchangMemoryToolSync(live_server.url, token, "user")
    created = memory.run(
        {"command": "create", "path": "/memories/notes/tea.md", "file_text": "green\n"}
    )
    with pytest.raises(ToolError) as raised:
        memory.run(
            {"command": "create", "path": "/memories/notes/tea.md", "file_text": ""}
        )
    viewed = memory.run({"command": "view", "path": "/memories/notes/tea.md"})
    memory.close()

    assert created == "File created successfully at: /memories/notes/tea.md"
    assert str(raised.value) == "File /memories/notes/tea.md already exists"
    assert viewed.splitlines()[1:] == ["     1\tgreen", "     2\t"]


async def test_the_async_memory_tool_edits(live_server: LiveServer, token: str) -> None:
    memory = WenchangMemoryTool(live_server.url, token, "user")
    await memory.run(
        {"command": "create", "path": "/memories/a.md", "file_text": "x\n"}
    )
    edited = await memory.run(
        {
            "command": "str_replace",
            "path": "/memories/a.md",
            "old_str": "x",
            "new_str": "y",
        }
    )
    await memory.aclose()

    assert edited.endswith("     1\ty\n     2\t")


async def test_the_langgraph_store_round_trips(
    live_server: LiveServer, token: str
) -> None:
    store = WenchangStore(live_server.url, token, "user")
    await store.aput(("a", "b"), "k/1", {"content": "- [stated] x\n", "n": 1})
    item = await store.aget(("a", "b"), "k/1")
    namespaces = await store.alist_namespaces()
    await store.aclose()

    assert item is not None and item.value == {"content": "- [stated] x\n", "n": 1}
    assert namespaces == [("a", "b")]
