"""Operator tasks as docs/operations.md promises them, through the task runner
and HTTP: the per-entity file cap is not applied to imports (an operator
restoring data is not a caller filling a quota), while a caller's create past
the cap is still FILE_QUOTA_EXCEEDED.
"""

from pathlib import Path

from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.http_support import file_body, open_api


async def test_an_import_is_not_held_to_the_file_cap(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'wenchang.db'}"
    settings = Settings(
        storage=storage, tokens_file=str(tmp_path / "t.json"), max_files_per_entity=1
    )
    files = [
        {"area": "notes", "name": f"n{i}", "content": "- [stated] x\n"}
        for i in range(3)
    ]
    document = {"scope": "user", "entity_id": "alice", "files": files}
    report = await build_task_runner(settings).run("memory.import", input=document)

    limits = {"max_files_per_entity": 1, "list_page_size": 10}
    async with open_api(tmp_path, storage=storage, **limits) as api:
        listed = await api.http.get("/v1/files/user/notes", headers=api.alice)
        refused = await api.http.put(
            "/v1/files/user/notes/more",
            json=file_body(),
            headers=api.alice | {"If-None-Match": "*"},
        )

    assert [entry.name for entry in report.created] == ["n0", "n1", "n2"]
    assert [entry["name"] for entry in listed.json()["entries"]] == ["n0", "n1", "n2"]
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "FILE_QUOTA_EXCEEDED"
