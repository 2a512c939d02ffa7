"""memory.purge through the task runner when erasure cannot finish.

Another writer of the same SQLite database re-creates each file of the entity
the moment the purge deletes it. A trigger in the database file stands for that
writer, so every run races the same way: the real task on the real adapter
deletes every file it lists on each of its passes and still finds files after
the last one, and must end in PURGE_INCOMPLETE, naming what remained and how
many passes ran, rather than report an erasure that did not happen.
"""

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import ExportMemory, MemoryExport
from app.features.memory.use_cases.purge_memory import PURGE_MAX_PASSES
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from app.shared.errors import purge_incomplete

NAMES = ("a", "b", "c")

# Each live file of alice that is deleted comes back under a new name.
REWRITER = """
CREATE TRIGGER other_writer AFTER DELETE ON memory_objects
WHEN OLD.key LIKE 'user/alice/%'
BEGIN
    INSERT INTO memory_objects
        (key, data, description, aliases, sources, last_updated, version)
    VALUES (substr(OLD.key, 1, length(OLD.key) - 3) || '-again.md', OLD.data,
            OLD.description, OLD.aliases, OLD.sources, OLD.last_updated,
            OLD.version || '-again');
END
"""


async def test_a_purge_that_cannot_finish_ends_purge_incomplete(
    tmp_path: Path,
) -> None:
    database = tmp_path / "w.db"
    runner = build_task_runner(
        Settings(
            storage=f"sqlite:///{database}",
            tokens_file=str(tmp_path / "tokens.json"),
            cursor_secret="purge-incomplete-cursor-secret",
        )
    )
    files = [
        {"area": "notes", "name": n, "content": f"- [stated] {n}\n"} for n in NAMES
    ]
    await runner.run(
        "memory.import",
        input_json=json.dumps({"scope": "user", "entity_id": "alice", "files": files}),
    )
    with closing(sqlite3.connect(database)) as connection, connection:
        connection.execute(REWRITER)

    with pytest.raises(AppError) as raised:
        await runner.run(
            "memory.purge",
            input_json=json.dumps(
                {"scope": "user", "entity_id": "alice", "dry_run": False}
            ),
        )

    error = raised.value
    assert error.definition is purge_incomplete
    assert error.code == "PURGE_INCOMPLETE"
    assert (error.details["remaining"], error.details["passes"]) == (
        len(NAMES),
        PURGE_MAX_PASSES,
    )
    assert "run memory.purge again" in str(error.details["message"])
    left = await runner.run(
        "memory.export", input=ExportMemory(scope="user", entity_id="alice")
    )
    assert isinstance(left, MemoryExport)
    suffix = "-again" * PURGE_MAX_PASSES
    assert sorted(f.name for f in left.files) == [n + suffix for n in NAMES]
