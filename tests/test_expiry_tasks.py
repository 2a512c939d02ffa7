"""Expiry through the operator tasks: memory.export carries expires_at and
memory.import restores it, so a move between backends neither revives an
expired file nor drops a pending expiry."""

import json
from pathlib import Path

from app.features.memory.schemas import MemoryExport
from app.server.settings import Settings
from app.server.tasks import build_task_runner

ENTITY = {"scope": "user", "entity_id": "alice"}
FILES = [
    {
        "area": "notes",
        "name": "gone",
        "content": "- [stated] a\n",
        "expires_at": "2020-01-01T00:00:00Z",
    },
    {
        "area": "notes",
        "name": "later",
        "content": "- [stated] b\n",
        "expires_at": "2999-01-01T00:00:00Z",
    },
    {"area": "notes", "name": "kept", "content": "- [stated] c\n"},
]


async def test_export_and_import_carry_the_expiry(tmp_path: Path) -> None:
    settings = Settings(
        storage=f"sqlite:///{tmp_path / 'w.db'}", tokens_file=str(tmp_path / "t.json")
    )
    runner = build_task_runner(settings)
    document = {**ENTITY, "files": FILES, "mode": "fail"}

    await runner.run("memory.import", input_json=json.dumps(document))
    exported = await runner.run("memory.export", input_json=json.dumps(ENTITY))

    assert isinstance(exported, MemoryExport)
    shown = {f.name: f.model_dump().get("expires_at") for f in exported.files}
    assert shown == {
        "gone": "2020-01-01T00:00:00Z",
        "kept": None,
        "later": "2999-01-01T00:00:00Z",
    }
    kept = next(f for f in exported.files if f.name == "kept")
    assert "expires_at" not in kept.model_dump()
