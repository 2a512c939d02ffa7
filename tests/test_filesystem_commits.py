"""Filesystem storage after the commit point: a landed write is never reported failed.

Cleanup after the sidecar's rename (the old body, history trimming) is best
effort; a failure to sync the rename is an outcome unknown, and never removes
the body the new sidecar names.
"""

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.filesystem import storage as filesystem_storage
from app.infra.filesystem.key_history import KeyHistories
from app.infra.filesystem.storage import FilesystemStorage

KEY = "user/alice/notes/tea.md"
AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
META = FileMetadata(description="Tea", aliases=(), sources=(), last_updated=AT)
CHANGE = Change("write_file", "http", AT)


def refuse(*_: object) -> None:
    raise OSError(5, "Input/output error")


async def test_a_cleanup_failure_after_the_commit_keeps_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    storage = FilesystemStorage(tmp_path)
    first = await storage.put(Write(KEY, b"first", META, change=CHANGE))
    monkeypatch.setattr(KeyHistories, "trim", refuse)

    second = await storage.put_if_version(Write(KEY, b"second", META, CHANGE), first)
    deleted = second is not None and await storage.delete_if_version(
        KEY, second, change=CHANGE
    )

    assert second is not None and deleted
    assert await storage.get(KEY) is None
    versions = await storage.list_versions(KEY, after=None, limit=10)
    assert [record.deleted for record in versions] == [True, False, False]
    # Each failed cleanup is logged once with its cause, for the operator.
    warnings = [r for r in caplog.records if r.name.endswith("filesystem.commits")]
    assert len(warnings) == 2
    assert all(r.levelname == "WARNING" and r.exc_info for r in warnings)
    assert all(r.getMessage().startswith("cleanup after") for r in warnings)


async def test_an_unsynced_commit_is_an_outcome_unknown_and_keeps_its_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FilesystemStorage(tmp_path)
    first = await storage.put(Write(KEY, b"first", META, change=CHANGE))
    synced = filesystem_storage.replace_file

    def replace_then_fail(path: str, data: bytes) -> None:
        synced(path, data)
        raise OSError(5, "Input/output error")  # the directory sync failed

    monkeypatch.setattr(filesystem_storage, "replace_file", replace_then_fail)

    with pytest.raises(AppError) as raised:
        await storage.put_if_version(Write(KEY, b"second", META, CHANGE), first)

    assert raised.value.details["outcome"] == "unknown"
    stored = await storage.get(KEY)  # what readers see is whole
    assert stored is not None and stored.data == b"second"


async def test_a_create_whose_sidecar_never_landed_fails_plainly_and_leaves_no_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FilesystemStorage(tmp_path)
    monkeypatch.setattr(filesystem_storage, "replace_file", refuse)

    with pytest.raises(AppError) as raised:
        await storage.put_if_version(Write(KEY, b"first", META, CHANGE), None)

    assert raised.value.details["reason"] == "unavailable"
    assert "outcome" not in raised.value.details
    assert os.listdir(tmp_path / "user" / "alice" / "notes") == []


async def test_a_sidecar_unreadable_after_a_failed_commit_keeps_the_body_it_may_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FilesystemStorage(tmp_path)
    first = await storage.put(Write(KEY, b"first", META, change=CHANGE))
    area = tmp_path / "user" / "alice" / "notes"
    synced = filesystem_storage.replace_file

    def replace_then_lose_the_sidecar(path: str, data: bytes) -> None:
        synced(path, data)
        os.unlink(path)
        os.mkdir(path)  # whatever it names can no longer be read back
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(
        filesystem_storage, "replace_file", replace_then_lose_the_sidecar
    )

    with pytest.raises(AppError) as raised:
        await storage.put_if_version(Write(KEY, b"second", META, CHANGE), first)

    assert raised.value.details["outcome"] == "unknown"
    bodies = [name for name in os.listdir(area) if not name.endswith("%meta")]
    assert len(bodies) == 2 and f"tea.md%{first}" in bodies  # the new body kept
