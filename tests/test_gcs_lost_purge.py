"""memory.purge on GCS when one of its deletes reaches GCS and its answer is lost.

The proxy lets the purge's removal of one file reach the emulator and then
closes the connection (the retry meets the object already gone) or holds the
answer past the deadline. The file is gone, and the purge removed it, so the
report counts and names it: a purge's report is what it erased, exactly. Run
again, the purge finds nothing left and reports nothing.
"""

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.features.memory.schemas import ExportMemory, MemoryExport, PurgeReport
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator

NAMES = ("a", "b", "c")
DEADLINE_SECONDS = 1
LATE_SECONDS = 2.5
LOSSES = {
    # hold 0 closes the connection; attempts per call
    "lost": (0.0, 3),  # the retry finds the object already removed
    "late": (LATE_SECONDS, 3),  # the attempt times out, then the same
    "deadline": (LATE_SECONDS, 1),  # the call's deadline expires
}
ALICE = {"scope": "user", "entity_id": "alice"}


@pytest.fixture(params=list(LOSSES))
def loss(request: pytest.FixtureRequest) -> tuple[float, int]:
    return LOSSES[str(request.param)]


async def test_a_purge_whose_delete_answer_is_lost_reports_what_it_erased(
    tmp_path: Path, gcs_emulator: GcsEmulator, loss: tuple[float, int]
) -> None:
    hold, attempts = loss
    storage = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}"
    runner = build_task_runner(
        Settings(
            storage=f"{storage}?timeout={DEADLINE_SECONDS}&attempts={attempts}",
            tokens_file=str(tmp_path / "tokens.json"),
            cursor_secret="lost-purge-cursor-secret",
        )
    )
    files = [
        {"area": "notes", "name": n, "content": f"- [stated] {n}\n"} for n in NAMES
    ]
    await runner.run("memory.import", input_json=json.dumps(ALICE | {"files": files}))

    async def purge() -> PurgeReport:
        purged: Any = await runner.run(
            "memory.purge", input_json=json.dumps(ALICE | {"dry_run": False})
        )
        return PurgeReport.model_validate(purged)

    proxy = gcs_emulator.proxy
    lost = proxy.lost
    proxy.lose_answer("/user/alice/notes/b.md", hold=hold)
    try:
        report = await purge()
    finally:
        proxy.lose_answer(None)
        proxy.answer_again()
    again = await purge()
    left: Any = await runner.run(
        "memory.export", input=ExportMemory(scope="user", entity_id="alice")
    )

    assert proxy.lost == lost + 1  # the answer really was lost
    assert report.objects == len(NAMES)
    assert sorted(f.name for f in report.files) == list(NAMES)
    assert (again.objects, again.files) == (0, [])
    assert MemoryExport.model_validate(left).files == []
    async with httpx.AsyncClient() as http:
        listing = await http.get(
            f"{gcs_emulator.url}/storage/v1/b/{TEST_BUCKET}/o",
            params={"versions": "true", "prefix": storage.split("/", 3)[3]},
        )
    names = [item["name"] for item in listing.json().get("items", [])]
    assert not [name for name in names if "alice" in name]  # tombstones erased
