"""memory.export_markdown / memory.import_markdown through the task runner and
the ``tenchi task run`` command, on SQLite and the filesystem adapter."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.support.server import clean_env

ENTITY = {"scope": "user", "entity_id": "alice"}
REPOSITORY = Path(__file__).resolve().parents[1]
FILES: list[dict[str, Any]] = [
    {"area": "system", "name": "rules", "content": "- [system] Be kind.\n"},
    {
        "area": "notes",
        "name": "日記 ☕ “quoted” %2F",
        "content": "- [stated] 日本語 😀\r\n---\n```\ncode\n```",
        "description": "déjà vu",
        "aliases": ["ñ", "日本"],
        "sources": ["a", "b"],
        "last_updated": "2025-04-05T06:07:08.123456Z",
        "expires_at": "2999-01-01T00:00:00Z",
    },
    {"area": "notes", "name": "empty", "content": ""},
]


def tree_of(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def tenchi_task(storage: str, root: Path, name: str, payload: object) -> Any:
    """``tenchi task run NAME --json`` in a fresh process; its parsed output."""
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "tenchi"),
            *("task", "run", name, "--input", json.dumps(payload), "--json"),
        ],
        cwd=REPOSITORY,
        env=clean_env(
            {
                "WENCHANG_STORAGE": storage,
                "WENCHANG_TOKENS_FILE": str(root / "tokens.json"),
            }
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)["output"]


@pytest.mark.parametrize("backend", ["sqlite", "file"])
async def test_export_purge_import_export_gives_the_same_bytes(
    tmp_path: Path, backend: str
) -> None:
    """The round trip keeps every byte, the versions included."""
    url = {
        "sqlite": f"sqlite:///{tmp_path / 'w.db'}",
        "file": f"file://{tmp_path / 'files'}",
    }[backend]
    settings = Settings(storage=url, tokens_file=str(tmp_path / "t.json"))
    runner = build_task_runner(settings)
    first, second = tmp_path / "first", tmp_path / "second"
    await runner.run("memory.import", input={**ENTITY, "files": FILES})
    await runner.run("memory.export_markdown", input={**ENTITY, "path": str(first)})
    await runner.run("memory.purge", input={**ENTITY, "dry_run": False})

    imported = await runner.run(
        "memory.import_markdown", input={**ENTITY, "path": str(first)}
    )
    again = await runner.run(
        "memory.import_markdown", input={**ENTITY, "path": str(first)}
    )
    await runner.run("memory.export_markdown", input={**ENTITY, "path": str(second)})

    assert imported.model_dump()["created"] == 3
    assert again.model_dump()["unchanged"] == 3
    assert tree_of(second) == tree_of(first)
    assert len(tree_of(first)) == 3


def test_tenchi_task_run_prints_one_json_result(tmp_path: Path) -> None:
    """Without a terminal, stdout is the one JSON result of each task."""
    storage = f"sqlite:///{tmp_path / 'w.db'}"
    tenchi_task(storage, tmp_path, "memory.import", {**ENTITY, "files": FILES})
    tree = tmp_path / "tree"

    exported = tenchi_task(
        storage, tmp_path, "memory.export_markdown", {**ENTITY, "path": str(tree)}
    )
    checked = tenchi_task(
        storage,
        tmp_path,
        "memory.import_markdown",
        {**ENTITY, "path": str(tree), "dry_run": True},
    )

    assert (exported["files"], exported["written"]) == (3, 3)
    assert (checked["dry_run"], checked["unchanged"]) == (True, 3)
    assert (tree / "user/notes/empty.md").read_bytes().startswith(b"---\n")
