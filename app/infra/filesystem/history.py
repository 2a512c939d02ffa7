"""Filesystem version history: one archive file per superseded record.

The sidecar is the commit point of every mutation and names the change that
wrote it, so the current version's record is read from the sidecar and body
themselves. Just before a mutation commits, the record of the version it
replaces (which did land) is archived under ``root/.history/<key>/``; archiving
it early, or twice after a crash, is harmless because readers skip an archived
copy of the current version. A delete archives its tombstone, naming the
version it deletes, then removes the sidecar: a tombstone whose deleted version
is still current did not land; readers ignore it and the key's next mutation
removes it. Callers hold the storage's lock (exclusive to change anything).
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from app.features.memory.ports import VersionRecord
from app.infra.durable_files import sync_directory, write_new
from app.infra.filesystem.layout import (
    Record,
    encode_segment,
    prefix_directory,
    remove_empty,
)
from app.infra.object_metadata import metadata_from_map, metadata_to_map

HISTORY_DIR = ".history"


@dataclass(frozen=True, slots=True)
class Archived:
    """An archive file (None for the current record) and the record it holds."""

    path: str | None
    record: VersionRecord


def history_directory(root: Path, key: str) -> Path:
    return root.joinpath(HISTORY_DIR, *map(encode_segment, key.split("/")))


def current_record(record: Record, body: str) -> VersionRecord | None:
    """The record a sidecar stands for, when a recorded change wrote it."""
    if record.operation is None or record.actor is None:
        return None
    return VersionRecord(
        version=record.entry.version,
        operation=record.operation,
        actor=record.actor,
        deleted=False,
        size=os.stat(body).st_size,
        metadata=record.entry.metadata,
    )


def _read(path: str, *, with_data: bool) -> Archived:
    with open(path, "rb") as stream:
        header = json.loads(stream.readline())
        data = stream.read() if with_data else None
    record = VersionRecord(
        version=header["version"],
        operation=header["operation"],
        actor=header["actor"],
        deleted=header["deleted"],
        size=header["size"],
        metadata=metadata_from_map(header["metadata"]),
        data=data,
    )
    return Archived(path, record)


def _parse(name: str) -> tuple[str, str | None]:
    """(version, the version a tombstone deleted) from an archive file's name."""
    version, _, replaces = name.split("-", 1)[1].partition("~")
    return version, replaces or None


def _names(directory: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(directory) if not n.startswith("."))
    except FileNotFoundError:
        return []


def archive(
    directory: Path, key: str, record: VersionRecord, replaces: str | None = None
) -> None:
    """Add ``record`` as the newest archive file, unless it is archived already."""
    _ensure(directory)
    names = _names(directory)
    if any(_parse(name)[0] == record.version for name in names):
        return
    sequence = int(names[-1].split("-", 1)[0]) + 1 if names else 1
    header = {
        "key": key,
        "version": record.version,
        "operation": record.operation,
        "actor": record.actor,
        "deleted": record.deleted,
        "size": record.size,
        "metadata": metadata_to_map(record.metadata),
    }
    name = f"{sequence:012d}-{record.version}" + (f"~{replaces}" if replaces else "")
    document = json.dumps(header).encode() + b"\n" + (record.data or b"")
    write_new(os.path.join(directory, name), document)
    # Durable before the mutation that replaces this version commits.
    sync_directory(directory)


def _ensure(directory: Path) -> None:
    """Create ``directory`` and missing parents, each name made durable."""
    if directory.is_dir():
        return
    _ensure(directory.parent)
    directory.mkdir()
    sync_directory(directory.parent)


def _valid(directory: Path, current: str | None) -> list[str]:
    """Names of archive files that hold a landed record, oldest first."""
    valid: list[str] = []
    for name in _names(directory):
        version, replaces = _parse(name)
        if version != current and (replaces is None or replaces != current):
            valid.append(name)
    return valid


def archived(directory: Path, current: str | None) -> list[Archived]:
    """The key's valid archive files, newest first, without data."""
    return [
        _read(os.path.join(directory, name), with_data=False)
        for name in reversed(_valid(directory, current))
    ]


def read_archived(
    directory: Path, version: str, current: str | None
) -> VersionRecord | None:
    """The archived record of ``version`` with its data, when it landed."""
    for name in _valid(directory, current):
        if _parse(name)[0] == version:
            return _read(os.path.join(directory, name), with_data=True).record
    return None


def drop_unlanded(directory: Path, current: str) -> None:
    """Remove tombstones of a delete of ``current``, which never landed."""
    for name in _names(directory):
        if _parse(name)[1] == current:
            os.unlink(os.path.join(directory, name))


def scrub_history(root: Path, prefix: str) -> None:
    """Remove every archive file of a key under ``prefix``, then empty directories."""
    top = prefix_directory(root / HISTORY_DIR, prefix)
    if top is None or not top.is_dir():
        return
    for directory, _, names in os.walk(top, topdown=False):
        here = Path(directory)
        for name in names:
            path = os.path.join(directory, name)
            if name.startswith(".") or _key_of(path).startswith(prefix):
                os.unlink(path)
        if here != root / HISTORY_DIR and not os.listdir(here):
            here.rmdir()


def erase_history(root: Path, key: str) -> None:
    """Remove every archive file of exactly ``key``, then empty directories."""
    directory = history_directory(root, key)
    if not directory.is_dir():
        return
    for name in os.listdir(directory):
        os.unlink(os.path.join(directory, name))
    sync_directory(directory)
    remove_empty(root / HISTORY_DIR, directory)


def _key_of(path: str) -> str:
    with open(path, "rb") as stream:
        return str(json.loads(stream.readline())["key"])
