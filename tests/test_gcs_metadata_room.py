"""GCS caps custom metadata at 8 KiB: a write past it is refused before it is sent.

Description and aliases keep to their 6,144-byte budget on every backend; what
else a file's metadata holds (its sources, one per labelled writer, and what a
write records) can still pass GCS's cap, and GCS's 400 would reach the caller as
an internal error. The GCS adapter refuses such a write as ``INVALID_ARGUMENT``
naming the largest part, leaving room for what a rename's mark adds; the
precondition proxy refuses metadata over 8 KiB as GCS does.
"""

import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.gcs.history import METADATA_ROOM, change_map
from app.infra.gcs.storage import open_gcs_storage
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from app.shared.errors import invalid_argument
from tests.support.gcs_emulator import GcsEmulator

AT = datetime(2026, 12, 7, tzinfo=UTC)
MANY = tuple(f"agent-{i:02d}-" + "x" * 240 for i in range(32))
"""Thirty-two long token labels: about 8 KiB of sources, past GCS's cap."""


def fresh(emulator: GcsEmulator) -> str:
    bucket = f"room-{uuid.uuid4().hex[:12]}"
    emulator.create_bucket(bucket)
    return f"gcs://{bucket}/t"


async def test_a_write_whose_sources_leave_no_room_is_refused_naming_them(
    gcs_emulator: GcsEmulator,
) -> None:
    meta = FileMetadata("tea notes", ("tea",), MANY, AT)
    key = "user/alice/notes/tea.md"
    async with open_gcs_storage(fresh(gcs_emulator)) as storage:
        for write in (
            lambda: storage.put(
                Write(key, b"x\n", meta, Change("write_file", "a", AT))
            ),
            lambda: storage.put_if_version(Write(key, b"x\n", meta), None),
        ):
            with pytest.raises(AppError) as raised:
                await write()
            assert raised.value.definition is invalid_argument
            assert raised.value.details["argument"] == "sources"
            assert "too large for GCS storage (custom metadata: " in str(
                raised.value.message
            )
            assert f"{METADATA_ROOM} bytes a file; description 9," in str(
                raised.value.message
            )
        assert await storage.get(key) is None
        assert await storage.count("user/alice/") == 0


async def test_the_largest_file_the_budgets_allow_is_written_and_renamed(
    gcs_emulator: GcsEmulator,
) -> None:
    """Description and aliases at their budget, the longest name an archive
    allows and a call key: it fits, and so does its rename's mark."""
    meta = FileMetadata("d" * 6142, (), ("claude-desktop",), AT)
    source = "user/alice/notes/" + "n" * 900 + ".md"
    destination = "user/alice/notes/" + "m" * 900 + ".md"
    async with open_gcs_storage(fresh(gcs_emulator)) as storage:
        change = Change("write_file", "claude-desktop", AT, "c" * 64)
        version = await storage.put(Write(source, b"x\n", meta, change))
        renamed = Change("rename_file", "claude-desktop", AT, "k" * 64)
        moved = await storage.rename_if_version(
            source, destination, version, replacing=None, change=renamed
        )
        assert moved is not None
        assert await storage.get(source) is None
        stored = await storage.get(destination)
        assert stored is not None and stored.metadata.description == "d" * 6142


async def test_an_import_whose_sources_leave_no_room_is_refused_naming_them(
    tmp_path: Path, gcs_emulator: GcsEmulator
) -> None:
    runner = build_task_runner(
        Settings(
            storage=fresh(gcs_emulator),
            tokens_file=str(tmp_path / "tokens.json"),
            cursor_secret="metadata-room-cursor-secret",
        )
    )
    file = {"area": "notes", "name": "tea", "content": "- [stated] tea\n"}
    many = file | {"name": "coffee", "sources": list(MANY)}
    imported = {"scope": "user", "entity_id": "alice", "files": [file, many]}

    with pytest.raises(AppError) as raised:
        await runner.run("memory.import", input_json=json.dumps(imported))

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "sources"
    listed = {"scope": "user", "entity_id": "alice"}
    exported = await runner.run("memory.export", input_json=json.dumps(listed))
    assert "coffee" not in json.dumps(exported, default=str)


async def test_metadata_of_exactly_the_room_is_written_and_a_byte_more_is_refused(
    gcs_emulator: GcsEmulator,
) -> None:
    """The refusal names the largest part (here the description) and by how
    many bytes the metadata is over."""
    change = Change("write_file", "claude-desktop", AT, "c" * 64)
    base = FileMetadata("", (), ("claude-desktop",), AT)
    fill = METADATA_ROOM - sum(
        len(k.encode()) + len(v.encode()) for k, v in change_map(base, change).items()
    )
    async with open_gcs_storage(fresh(gcs_emulator)) as storage:
        fits = replace(base, description="d" * fill)
        assert await storage.put(Write("user/alice/notes/a.md", b"x\n", fits, change))

        over = replace(base, description="d" * (fill + 1))
        with pytest.raises(AppError) as raised:
            await storage.put(Write("user/alice/notes/b.md", b"x\n", over, change))
        assert raised.value.details["argument"] == "description"
        assert str(raised.value.message).startswith(
            "Argument description is invalid: 1 bytes too large for GCS storage"
        )
        assert await storage.get("user/alice/notes/b.md") is None
