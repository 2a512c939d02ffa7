"""memory.purge on a GCS bucket with object versioning: a replaced object leaves
its old generation behind (noncurrent, with ``timeDeleted``), and a purge erases
every generation of the entity's objects, those included, and none of another
entity's. The proxy erases one generation as GCS does (the emulator cannot)."""

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.features.memory.ports import FileMetadata, Write
from app.infra.gcs.storage import open_gcs_storage
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.support.gcs_emulator import GcsEmulator
from tests.support.storage_history_conformance import change

Generation = tuple[str, str, str | None]
"""An object's name, generation and (noncurrent) time of deletion."""


async def generations(
    emulator: GcsEmulator, bucket: str, entity: str
) -> list[Generation]:
    """Every generation of ``entity``'s objects in ``bucket``, noncurrent ones too."""
    async with httpx.AsyncClient() as http:
        listing = await http.get(
            f"{emulator.url}/storage/v1/b/{bucket}/o", params={"versions": "true"}
        )
    assert listing.status_code == 200, listing.text
    items: list[dict[str, Any]] = listing.json().get("items", [])
    return sorted(
        (item["name"], str(item["generation"]), item.get("timeDeleted"))
        for item in items
        if f"/{entity}/" in item["name"]
    )


PAGED = ("change_log", "deletes", "history", "listing", "moved_history", "storage")
"""The GCS modules whose listings page by their ``LIST_BATCH``."""


@pytest.mark.parametrize(
    ("versioned", "page"), [(True, None), (False, 1)], ids=["versioned", "pages-of-1"]
)
async def test_a_purge_in_a_versioned_bucket_erases_every_generation_of_the_entity(
    tmp_path: Path,
    gcs_emulator: GcsEmulator,
    monkeypatch: pytest.MonkeyPatch,
    versioned: bool,
    page: int | None,
) -> None:
    """With pages of one object, every listing of the purge (and of the writes
    before it) goes from page to page: none may stop after its first. (Not in a
    versioned bucket: fake-gcs-server's page token is an object's name, so a page
    of one generation of a name with two starts again at that name, for ever.)"""
    for module in PAGED if page else ():
        monkeypatch.setattr(f"app.infra.gcs.{module}.LIST_BATCH", page)
    bucket = f"purged-{uuid.uuid4().hex[:12]}"
    gcs_emulator.create_bucket(bucket, versioned=versioned)
    runner = build_task_runner(
        Settings(
            storage=f"gcs://{bucket}/t",
            tokens_file=str(tmp_path / "tokens.json"),
            cursor_secret="versioned-purge-cursor-secret",
        )
    )
    for entity in ("alice", "bob"):
        for version in (1, 2):  # the second import replaces each file
            files = [
                {"area": "notes", "name": name, "content": f"- [stated] {version}\n"}
                for name in ("a", "b")
            ]
            imported = {"scope": "user", "entity_id": entity, "files": files}
            await runner.run(
                "memory.import", input_json=json.dumps(imported | {"mode": "overwrite"})
            )
    alice = await generations(gcs_emulator, bucket, "alice")
    bob = await generations(gcs_emulator, bucket, "bob")

    purged = {"scope": "user", "entity_id": "alice", "dry_run": False}
    await runner.run("memory.purge", input_json=json.dumps(purged))

    kept = [g for g in alice if g[2] is not None]  # replaced generations
    assert bool(kept) is versioned
    assert await generations(gcs_emulator, bucket, "alice") == []
    assert await generations(gcs_emulator, bucket, "bob") == bob


async def test_an_erase_of_one_file_in_a_versioned_bucket_erases_its_generations(
    gcs_emulator: GcsEmulator,
) -> None:
    """The sweep's erase of one file: every generation of its object goes (the
    replaced one, its tombstone) with its archive, and none of a neighbour's
    whose name starts with its own (``tea.md`` beside ``tea.md.md``)."""
    bucket = f"versioned-{uuid.uuid4().hex[:12]}"
    gcs_emulator.create_bucket(bucket, versioned=True)
    tea, neighbour = "user/alice/notes/tea.md", "user/alice/notes/tea.md.md"
    meta = FileMetadata("tea", (), (), datetime(2026, 12, 7, tzinfo=UTC))
    async with open_gcs_storage(f"gcs://{bucket}/t") as storage:
        for key in (neighbour, tea):
            first = await storage.put(Write(key, b"one\n", meta, change("write_file")))
            again = Write(key, b"two\n", meta, change("append_line"))
            assert await storage.put_if_version(again, first) is not None
        kept = await generations(gcs_emulator, bucket, "alice")
        version = (await storage.get(tea) or pytest.fail("no tea")).version

        assert await storage.erase_if_version(tea, version)

    left = await generations(gcs_emulator, bucket, "alice")
    assert [g for g in kept if g[0] == f"t/{tea}" and g[2] is not None]
    assert not [g for g in left if g[0] == f"t/{tea}" or f"/{tea}\\" in g[0]]
    assert [g for g in left if "tea.md.md" in g[0]] == [
        g for g in kept if "tea.md.md" in g[0]
    ]
