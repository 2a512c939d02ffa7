"""The importers from other memory tools as an operator runs them:
``tenchi task run memory.import_mcp_memory|memory.import_basic_memory`` in a
fresh process on a SQLite file, on the sample files in tests/samples."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.features.memory.schemas import MemoryExport
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.support.server import clean_env

REPOSITORY = Path(__file__).resolve().parents[1]
SAMPLES = REPOSITORY / "tests" / "samples"
ENTITY = {"scope": "user", "entity_id": "alice"}
MCP = {**ENTITY, "path": str(SAMPLES / "mcp-memory" / "memory.json")}
NOTES = {**ENTITY, "path": str(SAMPLES / "basic-memory" / "project")}


def run_task(root: Path, name: str, payload: object) -> tuple[bool, Any]:
    """``tenchi task run NAME --json`` on root's SQLite file: (ok, output | error)."""
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "tenchi"),
            *("task", "run", name, "--input", json.dumps(payload), "--json"),
        ],
        cwd=REPOSITORY,
        env=clean_env(
            {
                "WENCHANG_STORAGE": f"sqlite:///{root / 'w.db'}",
                "WENCHANG_TOKENS_FILE": str(root / "tokens.json"),
            }
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answer = json.loads(completed.stdout)
    assert (completed.returncode == 0) == answer["ok"], completed.stderr
    return answer["ok"], answer["output"] if answer["ok"] else answer["error"]


async def exported(root: Path) -> list[tuple[str, str, str, str]]:
    settings = Settings(
        storage=f"sqlite:///{root / 'w.db'}", tokens_file=str(root / "tokens.json")
    )
    export = await build_task_runner(settings).run("memory.export", input=ENTITY)
    assert isinstance(export, MemoryExport)
    return [(f.area, f.name, f.content, f.version) for f in export.files]


async def test_dry_run_then_import_then_rerun(tmp_path: Path) -> None:
    """A dry run writes nothing; the import writes every file; a re-run of
    either importer changes nothing (same versions) and reports so."""
    ok, dry = run_task(tmp_path, "memory.import_mcp_memory", MCP | {"dry_run": True})
    assert ok and dry["changed"] and len(dry["created"]) == 4
    assert await exported(tmp_path) == []

    ok, first = run_task(tmp_path, "memory.import_mcp_memory", MCP)
    assert ok and first["created"] == dry["created"]
    ok, notes = run_task(tmp_path, "memory.import_basic_memory", NOTES)
    assert ok and notes["created"] == ["Ada Okafor", "reading-list", "Search Design"]
    before = await exported(tmp_path)
    assert [(area, name) for area, name, _, _ in before] == [
        ("knowledge", "Ada Okafor"),
        ("knowledge", "Harbor Labs"),
        ("knowledge", "Lagos"),
        ("knowledge", "Tidewatch"),
        ("notes", "Ada Okafor"),
        ("notes", "Search Design"),
        ("notes", "reading-list"),
    ]

    for name, payload in (
        ("memory.import_mcp_memory", MCP),
        ("memory.import_basic_memory", NOTES),
    ):
        ok, again = run_task(tmp_path, name, payload)
        assert ok and not again["changed"]
        assert again["created"] == again["overwritten"] == []
    assert await exported(tmp_path) == before


async def test_malformed_input_is_refused_with_nothing_written(tmp_path: Path) -> None:
    """The error names the file and line; the database is left as it was."""
    ok, _ = run_task(tmp_path, "memory.import_mcp_memory", MCP)
    before = await exported(tmp_path)
    cases = [
        ("memory.import_mcp_memory", "mcp-memory/malformed/unknown-entity.json", 2),
        ("memory.import_basic_memory", "basic-memory/malformed/bad-yaml.md", 4),
    ]

    for name, sample, line in cases:
        payload = {**ENTITY, "path": str(SAMPLES / sample), "mode": "overwrite"}
        ok, error = run_task(tmp_path, name, payload)
        assert not ok and error["code"] == "INVALID_ARGUMENT"
        assert error["details"]["argument"] == "path"
        assert f"{Path(sample).name} line {line}:" in error["message"]

    assert await exported(tmp_path) == before
