"""memory.sweep_expired on a terminal: a bar on stderr, stdout the one JSON result."""

import json
from pathlib import Path

from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.test_markdown_progress import ENTITY, on_a_terminal


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
    shown, stdout = on_a_terminal(tmp_path, "memory.sweep_expired", {"dry_run": False})

    assert b"sweep" in shown and b"3" in shown
    assert len(json.loads(stdout)["output"]["files"]) == 3
