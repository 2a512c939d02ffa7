"""The filesystem storage's history on disk: one record per landed version, no other.

The current version's record is the sidecar and body themselves; each
superseded one is an archive file. A delete cut short after its tombstone was
archived never landed, so its tombstone is no version; a rename moves the
source's records after the destination's own, in order, and a crash after its
journal is finished by the next process without leaving the replaced body.
"""

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.infra.durable_files import replace_file
from app.infra.filesystem import renames
from app.infra.filesystem.storage import FilesystemStorage

AT = datetime(2026, 12, 6, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
KEY, OTHER = "user/alice/notes/tea.md", "user/alice/notes/chai.md"
HISTORY = Path(".history", "user", "alice", "notes")


class Crash(BaseException):
    """The process dies here."""


def change(operation: str = "write_file") -> Change:
    return Change(operation, "t", AT)


async def written(storage: FilesystemStorage, key: str, *bodies: bytes) -> list[str]:
    """``key`` written once per body, each a recorded change: the versions."""
    versions: list[str] = []
    for body in bodies:
        last = versions[-1] if versions else None
        version = await storage.put_if_version(Write(key, body, META, change()), last)
        assert version is not None
        versions.append(version)
    return versions


async def test_the_current_version_reads_back_with_its_data(tmp_path: Path) -> None:
    storage = FilesystemStorage(tmp_path)
    first, second = await written(storage, KEY, b"one", b"two")

    current = await storage.get_version(KEY, second)
    archived = await storage.get_version(KEY, first)

    assert current is not None and (current.data, current.size) == (b"two", 3)
    assert archived is not None and archived.data == b"one"


async def test_an_unrecorded_write_is_no_version(tmp_path: Path) -> None:
    """A put without a change (a migration's copy) keeps no history record."""
    storage = FilesystemStorage(tmp_path)
    version = await storage.put(Write(KEY, b"copied", META))

    assert await storage.get_version(KEY, version) is None
    assert await storage.list_versions(KEY, after=None, limit=10) == []


async def test_a_delete_cut_short_after_its_tombstone_is_no_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FilesystemStorage(tmp_path)
    first, second = await written(storage, KEY, b"one", b"two")
    unlink = os.unlink

    def crash_on_the_sidecar(
        path: str | os.PathLike[str], *arguments: Any, **options: Any
    ) -> None:
        if os.fspath(path).endswith("%meta"):
            raise Crash
        unlink(path, *arguments, **options)

    monkeypatch.setattr(os, "unlink", crash_on_the_sidecar)
    with contextlib.suppress(Crash):
        await storage.delete_if_version(KEY, second, change=change("delete_file"))
    monkeypatch.undo()
    tombstones = [
        name.split("-", 1)[1].partition("~")[0]
        for name in os.listdir(tmp_path / HISTORY / "tea.md")
        if "~" in name
    ]

    after = FilesystemStorage(tmp_path)  # the next process
    assert len(tombstones) == 1
    assert await after.get_version(KEY, tombstones[0]) is None
    history = await after.list_versions(KEY, after=None, limit=10)
    assert [record.version for record in history] == [second, first]
    stored = await after.get(KEY)
    assert stored is not None and stored.data == b"two"
    # The key's next mutation removes the tombstone that never landed.
    third = await after.put_if_version(Write(KEY, b"3", META, change()), second)
    assert third is not None
    names = os.listdir(tmp_path / HISTORY / "tea.md")
    assert len(names) == 2 and not any("~" in name for name in names)


async def test_versions_after_an_unknown_version_are_none(tmp_path: Path) -> None:
    storage = FilesystemStorage(tmp_path)
    await written(storage, KEY, b"one", b"two")

    assert await storage.list_versions(KEY, after="0123456789", limit=10) == []


async def test_a_rename_over_a_file_with_history_keeps_both_in_order(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    taken = await written(storage, OTHER, b"chai 1", b"chai 2")
    moved = await written(storage, KEY, b"tea 1", b"tea 2", b"tea 3")
    # A crash's leftover in the source's history is no record to move.
    (tmp_path / HISTORY / "tea.md" / ".tmp-0123456789abcdef").write_bytes(b"{")

    version = await storage.rename_if_version(
        KEY, OTHER, moved[-1], replacing=taken[-1], change=change("rename_file")
    )

    assert version is not None
    history = await storage.list_versions(OTHER, after=None, limit=10)
    newest_first = [version, *moved[::-1], *taken[::-1]]
    assert [record.version for record in history] == newest_first
    for record, data in zip(history[1:], [b"tea 3", b"tea 2"], strict=False):
        read = await storage.get_version(OTHER, record.version)
        assert read is not None and read.data == data
    assert await storage.list_versions(KEY, after=None, limit=10) == []
    # Renumbered after the destination's own: one sequence number each, no gap.
    names = sorted(os.listdir(tmp_path / HISTORY / "chai.md"))
    assert [name.split("-")[0] for name in names] == [f"{n:012d}" for n in range(1, 6)]


async def test_a_rename_finished_by_the_next_process_removes_the_replaced_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FilesystemStorage(tmp_path)
    (taken,) = await written(storage, OTHER, b"chai")
    (moved,) = await written(storage, KEY, b"tea")
    calls = 0

    def crash_after_the_journal(path: str, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls > 1:  # the journal landed; the destination's sidecar did not
            raise Crash
        replace_file(path, data)

    monkeypatch.setattr(renames, "replace_file", crash_after_the_journal)
    with contextlib.suppress(Crash):
        await storage.rename_if_version(
            KEY, OTHER, moved, replacing=taken, change=change("rename_file")
        )
    monkeypatch.undo()

    after = FilesystemStorage(tmp_path)  # the next process
    stored = await after.get(OTHER)
    assert stored is not None and stored.data == b"tea"
    assert await after.get(KEY) is None
    area = tmp_path / "user" / "alice" / "notes"
    assert sorted(os.listdir(area)) == [f"chai.md%{stored.version}", "chai.md%meta"]


async def test_a_delete_and_a_rename_leave_no_body_or_empty_directory(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    (taken,) = await written(storage, OTHER, b"chai")
    source = "user/alice/drafts/tea.md"
    (moved,) = await written(storage, source, b"tea")
    gone = "user/alice/old/old.md"
    (doomed,) = await written(storage, gone, b"old")

    renamed = await storage.rename_if_version(
        source, OTHER, moved, replacing=taken, change=change("rename_file")
    )
    deleted = await storage.delete_if_version(gone, doomed, change=change("delete"))

    assert renamed is not None and deleted
    area = tmp_path / "user" / "alice"
    assert os.listdir(area) == ["notes"]
    assert sorted(os.listdir(area / "notes")) == [f"chai.md%{renamed}", "chai.md%meta"]


async def test_a_delete_and_a_rename_prune_the_history_they_grow(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path, retention=HistoryRetention(max_versions=2))
    versions = await written(storage, KEY, b"one", b"two")
    assert await storage.delete_if_version(KEY, versions[-1], change=change("delete"))
    after_delete = await storage.list_versions(KEY, after=None, limit=10)
    *_, second = await written(storage, OTHER, b"chai 1", b"chai 2")

    renamed = await storage.rename_if_version(
        OTHER, KEY, second, replacing=None, change=change("rename_file")
    )

    assert [(r.deleted, r.version) for r in after_delete][1:] == [(False, versions[1])]
    assert len(after_delete) == 2
    history = await storage.list_versions(KEY, after=None, limit=10)
    assert [record.version for record in history] == [renamed, second]
    assert await storage.list_versions(OTHER, after=None, limit=10) == []


async def test_a_rename_onto_a_new_key_numbers_its_history_from_one(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    moved = await written(storage, KEY, b"tea 1", b"tea 2")

    version = await storage.rename_if_version(
        KEY, OTHER, moved[-1], replacing=None, change=change("rename_file")
    )

    assert version is not None
    names = sorted(os.listdir(tmp_path / HISTORY / "chai.md"))
    assert names == [f"000000000001-{moved[0]}", f"000000000002-{moved[1]}"]
