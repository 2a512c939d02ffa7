"""memory.sweep_expired on a terminal: a bar on stderr, stdout the one JSON result."""

import json
import os
import pty
import subprocess
from pathlib import Path

from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.test_markdown_progress import ENTITY, REPOSITORY, command, environment


async def seed_expired(root: Path, count: int) -> None:
    settings = Settings(
        storage=f"sqlite:///{root / 'w.db'}", tokens_file=str(root / "tokens.json")
    )
    files = [
        {
            "area": "notes",
            "name": f"n-{i}",
            "content": f"- [stated] {i}\n",
            "expires_at": "2020-01-01T00:00:00Z",
        }
        for i in range(count)
    ]
    await build_task_runner(settings).run(
        "memory.import", input={**ENTITY, "files": files}
    )


async def test_sweep_progress_shows_on_a_terminal(tmp_path: Path) -> None:
    await seed_expired(tmp_path, 3)
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        command("memory.sweep_expired", {"dry_run": False}),
        cwd=REPOSITORY,
        env=environment(tmp_path),
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

    assert process.returncode == 0
    assert b"sweep" in shown and b"3" in shown
    assert len(json.loads(stdout)["output"]["files"]) == 3
