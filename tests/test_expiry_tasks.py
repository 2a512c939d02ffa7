"""Expiry through the operator tasks: memory.export carries expires_at and
memory.import restores it, so a move between backends neither revives an
expired file nor drops a pending expiry."""

import json
from pathlib import Path

from app.features.memory.schemas import MemoryExport, SweepReport
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


async def test_sweep_expired_reports_then_erases_and_is_audited(
    tmp_path: Path,
) -> None:
    """A dry run (the default) names the expired file; a real run erases it
    (export no longer has it), a second run finds nothing; the run that names
    the entity is in its audit trail as one memory.sweep_expired event naming
    no file."""
    settings = Settings(
        storage=f"sqlite:///{tmp_path / 'w.db'}", tokens_file=str(tmp_path / "t.json")
    )
    runner = build_task_runner(settings)
    document = {**ENTITY, "files": FILES, "mode": "fail"}
    await runner.run("memory.import", input_json=json.dumps(document))

    dry = await runner.run("memory.sweep_expired", input_json="{}")
    swept = await runner.run(
        "memory.sweep_expired", input_json=json.dumps({"dry_run": False})
    )
    again = await runner.run(
        "memory.sweep_expired", input_json=json.dumps(ENTITY | {"dry_run": False})
    )
    exported = await runner.run("memory.export", input_json=json.dumps(ENTITY))
    audit = await runner.run("memory.audit", input_json=json.dumps(ENTITY))

    assert isinstance(dry, SweepReport) and isinstance(swept, SweepReport)
    assert isinstance(again, SweepReport) and isinstance(exported, MemoryExport)
    assert [(f.entity_id, f.name) for f in dry.files] == [("alice", "gone")]
    assert dry.dry_run and swept.files == dry.files and not swept.dry_run
    assert again.files == [] and again.kept == 0
    assert sorted(f.name for f in exported.files) == ["kept", "later"]
    events = [e for e in audit.model_dump()["events"] if "sweep" in e["operation"]]
    assert [e["operation"] for e in events] == ["memory.sweep_expired"]
    assert not events[0].get("files") and not events[0].get("name")
