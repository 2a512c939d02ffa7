"""The importers from other tools on a terminal: bars on stderr, stdout the result."""

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.test_foreign_import_tasks import MCP, NOTES
from tests.test_markdown_progress import REPOSITORY, command, environment


def on_a_terminal(root: Path, name: str, payload: object) -> tuple[bytes, bytes]:
    """Run the task with stderr a pseudo-terminal: (what it showed, stdout)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        command(name, payload),
        cwd=REPOSITORY,
        env=environment(root),
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal's other end closed: the task exited
            break
        if not chunk:
            break
        shown += chunk
    stdout, _ = process.communicate(timeout=120)
    os.close(controller)
    assert process.returncode == 0, shown
    return shown, stdout


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
