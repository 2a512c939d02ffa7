"""The importers from other tools on a terminal: bars on stderr, stdout the result."""

import json
from pathlib import Path

import pytest

from tests.test_foreign_import_tasks import MCP, NOTES
from tests.test_markdown_progress import on_a_terminal


@pytest.mark.parametrize(
    ("tool", "payload", "files"),
    [("mcp_memory", MCP, 4), ("basic_memory", NOTES, 3)],
)
def test_an_import_shows_its_bars_on_a_terminal(
    tmp_path: Path, tool: str, payload: dict[str, str], files: int
) -> None:
    shown, stdout = on_a_terminal(tmp_path, f"memory.import_{tool}", payload)

    assert f"check_{tool}".encode() in shown
    assert f"import_{tool}".encode() in shown
    assert f"{files}/{files}".encode() in shown
    assert len(json.loads(stdout)["output"]["created"]) == files
