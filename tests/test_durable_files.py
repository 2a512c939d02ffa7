"""Durable file writes: whole, synced and hidden until renamed, or not there at all.

``replace_file`` is the atomic write every file adapter relies on: a hidden
temporary beside the target, its data synced, renamed over the target, then
the directory synced. These tests read the disk and the syncs themselves.
"""

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from app.infra.durable_files import (
    read_file,
    remove_file,
    replace_file,
    sync_directory,
    write_new,
)


@pytest.fixture
def umask() -> Generator[None]:
    """The usual 022 umask, so a file's mode is the one asked for."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every fsync (of the path it synced) and rename (to its target), in order."""
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{descriptor}")))
        real_fsync(descriptor)

    def replace(source: str, target: str) -> None:
        events.append(("rename-from", source))
        real_replace(source, target)
        events.append(("rename", target))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return events


def test_replace_syncs_a_hidden_temporary_then_renames_then_syncs_the_directory(
    tmp_path: Path, syncs: list[tuple[str, str]]
) -> None:
    target = tmp_path / "record"
    target.write_bytes(b"old")

    replace_file(os.fspath(target), b"new")

    (_, synced), (_, temporary), (_, renamed), (_, directory) = syncs
    assert [kind for kind, _ in syncs] == ["fsync", "rename-from", "rename", "fsync"]
    assert synced == temporary
    assert os.path.dirname(temporary) == os.fspath(tmp_path)
    assert os.path.basename(temporary).startswith(".tmp-")
    assert (renamed, directory) == (os.fspath(target), os.fspath(tmp_path))
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["record"]


def test_a_failed_rename_leaves_the_old_file_whole_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "record"
    target.write_bytes(b"old")

    def crash(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="No space"):
        replace_file(os.fspath(target), b"new")

    assert os.listdir(tmp_path) == ["record"]
    assert target.read_bytes() == b"old"


def test_a_bare_name_is_replaced_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncs: list[tuple[str, str]]
) -> None:
    monkeypatch.chdir(tmp_path)

    replace_file("record", b"data")

    assert (tmp_path / "record").read_bytes() == b"data"
    assert syncs[-1] == ("fsync", os.fspath(tmp_path))


@pytest.mark.usefixtures("umask")
def test_files_are_written_with_the_mode_asked_for(tmp_path: Path) -> None:
    plain, private, fresh = (os.fspath(tmp_path / name) for name in "abc")

    replace_file(plain, b"x")
    replace_file(private, b"x", mode=0o600)
    write_new(fresh, b"x")

    modes = [os.stat(path).st_mode & 0o777 for path in (plain, private, fresh)]
    assert modes == [0o644, 0o600, 0o644]


def test_write_new_never_overwrites_and_syncs_its_data(
    tmp_path: Path, syncs: list[tuple[str, str]]
) -> None:
    path = os.fspath(tmp_path / "body")

    write_new(path, b"first")
    with pytest.raises(FileExistsError):
        write_new(path, b"second")

    assert read_file(path) == b"first"
    assert syncs == [("fsync", path)]


def test_only_a_directory_is_synced_as_one(tmp_path: Path) -> None:
    sync_directory(tmp_path)
    sync_directory(os.fspath(tmp_path))
    (tmp_path / "file").write_bytes(b"x")

    with pytest.raises(NotADirectoryError):
        sync_directory(tmp_path / "file")


def test_remove_file_removes_a_file_and_ignores_a_missing_one(tmp_path: Path) -> None:
    path = os.fspath(tmp_path / "body")
    write_new(path, b"x")

    remove_file(path)
    remove_file(path)

    assert os.listdir(tmp_path) == []
