"""Audit erasure promises (docs/audit.md, "Erasure"), over HTTP and tasks.

A purge removes the entity's events from the SQLite and JSON-lines stores and
records its own ``memory.purge`` event, naming no file; purging an entity twice
leaves only the last purge's event. Another entity's events stay.
"""

from pathlib import Path

import pytest

from app.server.tasks import build_task_runner
from tests.support.audited_app import open_audited


@pytest.mark.parametrize("store", ["sqlite", "file"])
async def test_purging_twice_leaves_only_the_last_purge_event(
    tmp_path: Path, store: str
) -> None:
    audit = {} if store == "sqlite" else {"audit": f"file://{tmp_path / 'audit'}"}
    async with open_audited(tmp_path, **audit) as api:
        read = await api.http.get("/v1/files/user/notes/tea", headers=api.alice.headers)
        assert read.status_code == 200, read.text
        await api.http.get("/v1/index", headers=api.bob.headers)
        runner = build_task_runner(api.settings)
        purge = {"scope": "user", "entity_id": "alice", "dry_run": False}
        for _ in range(2):
            await runner.run("memory.purge", input=purge)

        alice = await api.http.get("/v1/audit", headers=api.alice.headers)
        bob = await api.http.get("/v1/audit", headers=api.bob.headers)

    events = alice.json()["events"]
    assert [(e["operation"], e["files"]) for e in events] == [("memory.purge", [])]
    assert [e["operation"] for e in bob.json()["events"]] == ["get_memory_index"]
