"""Filesystem layout of storage keys: encoded names, sidecar records, ordered walks."""

import hashlib
import json
import os
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from app.features.memory.ports import Change, FileMetadata, ListedObject
from app.infra.durable_files import read_file, replace_file, sync_directory
from app.infra.object_metadata import (
    listed_object,
    metadata_from_map,
    metadata_to_map,
)
from app.shared.locations import SEGMENT_RULE, is_valid_segment

SIDECAR = "%meta"
SEGMENT_FILE = "%segment"
HASHED = "%~"
MAX_PLAIN_NAME = 200
HASHED_HEAD = 150
_SAFE = frozenset(string.ascii_lowercase + string.digits + "-_.~")


def encode_segment(segment: str) -> str:
    """A file name for one key segment; distinct segments get distinct names.

    Upper-case letters are escaped too, so a case-insensitive filesystem keeps
    ``A`` and ``a`` apart. A name too long for the filesystem keeps a readable
    head and ends in a digest; its full text is stored beside it. A segment
    must pass the rule every layer checks (``is_valid_segment``), so no name is
    ``.`` or ``..`` or holds a separator, whoever built the key.
    """
    if not is_valid_segment(segment):
        raise ValueError(f"a storage key segment {SEGMENT_RULE}")
    encoded = "".join(
        char if char in _SAFE else "".join(f"%{byte:02X}" for byte in char.encode())
        for char in segment
    )
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) <= MAX_PLAIN_NAME:
        return encoded
    head = encoded[:HASHED_HEAD]
    if (escape := head.rfind("%")) > len(head) - 3:
        head = head[:escape]
    return f"{head}{HASHED}{hashlib.sha256(segment.encode()).hexdigest()[:32]}"


def object_location(root: Path, key: str) -> tuple[Path, str]:
    """The directory of ``key``'s files and the stem of their names."""
    *directories, name = key.split("/")
    return root.joinpath(*map(encode_segment, directories)), encode_segment(name)


def prefix_directory(root: Path, prefix: str) -> Path | None:
    """The directory of the keys under ``prefix``'s whole segments below ``root``.

    None when one of those segments is no key segment: no key lies under it.
    """
    segments = prefix.split("/")[:-1]
    if not all(map(is_valid_segment, segments)):
        return None
    return root.joinpath(*map(encode_segment, segments))


def sidecar_path(directory: Path, stem: str) -> str:
    """A key's sidecar, as a ``str`` (see ``app.infra.durable_files``)."""
    return os.path.join(directory, f"{stem}{SIDECAR}")


def body_path(directory: Path, stem: str, version: str) -> str:
    """The body of ``version`` of a key, as a ``str`` (a name per write)."""
    return os.path.join(directory, f"{stem}%{version}")


def make_directories(root: Path, key: str) -> None:
    """Create the directories of ``key`` (a long segment's text beside its own)."""
    directory = root
    for segment in key.split("/")[:-1]:
        directory = directory / encode_segment(segment)
        if not directory.is_dir():
            directory.mkdir()
            sync_directory(directory.parent)
            if HASHED in directory.name:
                replace_file(os.path.join(directory, SEGMENT_FILE), segment.encode())


def remove_empty(root: Path, directory: Path) -> None:
    """Remove ``directory`` and its parents below ``root`` while they are empty."""
    while directory != root:
        names = os.listdir(directory)
        if names not in ([], [SEGMENT_FILE]):
            return
        for name in names:
            os.unlink(os.path.join(directory, name))
        directory.rmdir()
        directory = directory.parent


@dataclass(frozen=True, slots=True)
class Record:
    """A sidecar: the object as a listing shows it and, when recorded, its change."""

    entry: ListedObject
    operation: str | None = None
    actor: str | None = None


def read_record(sidecar: str) -> Record | None:
    try:
        raw = json.loads(read_file(sidecar))
    except FileNotFoundError:
        return None
    metadata = metadata_from_map(raw["metadata"])
    entry = listed_object(raw["key"], metadata, raw["version"])
    return Record(entry, raw.get("operation"), raw.get("actor"))


def record_document(
    key: str, version: str, metadata: FileMetadata, change: Change | None
) -> bytes:
    """The sidecar ``read_record`` reads back: the object, and ``change`` if any."""
    document = {
        "key": key,
        "version": version,
        "metadata": metadata_to_map(metadata),
        "operation": change.operation if change else None,
        "actor": change.actor if change else None,
    }
    return json.dumps(document).encode()


def _entries(directory: str, base: str) -> list[tuple[str, str, bool]]:
    """(key or key prefix, path, is directory) of what ``directory`` holds, sorted.

    A directory sorts as its segment plus ``/``, which is exactly where the keys
    under it fall in code-point order among its siblings.
    """
    found: list[tuple[str, str, bool]] = []
    with os.scandir(directory) as scan:
        for entry in scan:
            name, path = entry.name, entry.path
            if name.startswith(".") or name == SEGMENT_FILE:
                continue
            if entry.is_dir(follow_symlinks=False):
                segment = (
                    read_file(os.path.join(path, SEGMENT_FILE)).decode()
                    if HASHED in name
                    else unquote(name, errors="strict")
                )
                found.append((f"{base}{segment}/", path, True))
            elif name.endswith(SIDECAR):
                stem = name[: -len(SIDECAR)]
                record = read_record(path) if HASHED in stem else None
                key = (
                    record.entry.key
                    if record
                    else base + unquote(stem, errors="strict")
                )
                found.append((key, path, False))
    found.sort(key=lambda item: item[0])
    return found


def _entirely_before(directory_key: str, start_after: str | None) -> bool:
    """Whether every key under ``directory_key`` sorts at or before ``start_after``."""
    if start_after is None:
        return False
    return directory_key <= start_after and not start_after.startswith(directory_key)


def walk(
    directory: str, base: str, prefix: str, start_after: str | None
) -> Iterator[tuple[str, str]]:
    """(key, sidecar) of every object under ``directory`` in ``prefix``, ascending."""
    for key, path, is_directory in _entries(directory, base):
        if is_directory:
            overlaps = key.startswith(prefix) or prefix.startswith(key)
            if overlaps and not _entirely_before(key, start_after):
                yield from walk(path, key, prefix, start_after)
        elif key.startswith(prefix) and (start_after is None or key > start_after):
            yield key, path


def scrub_objects(root: Path, top: Path) -> None:
    """Remove unreferenced bodies and temporaries under ``top``, then every
    directory left empty, so no file name or byte of a deleted object remains."""
    for directory, _, names in os.walk(top, topdown=False):
        here = Path(directory)
        kept = {SEGMENT_FILE}
        for name in names:
            path = os.path.join(directory, name)
            record = read_record(path) if name.endswith(SIDECAR) else None
            if record is not None:
                stem = name[: -len(SIDECAR)]
                kept |= {name, f"{stem}%{record.entry.version}"}
        for name in set(names) - kept:
            os.unlink(os.path.join(directory, name))
        if here.exists():
            remove_empty(root, here)
