"""Durable file writes: a file is created or replaced whole, synced, or not at all.

A file's path is a ``str``, never a ``pathlib.Path``: on Python 3.12 pathlib
interns every part of a path it parses, and interned strings live as long as
the process, so a ``Path`` per written name (a temporary, a body or archive
file named by its version) kept each name forever (``bench.path_names``).
Directories, whose names are few and stable, may stay ``Path``s.
"""

import os
import secrets
from contextlib import suppress
from pathlib import Path


def sync_directory(directory: str | Path) -> None:
    """Make the names created, renamed or removed in ``directory`` durable."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_new(path: str, data: bytes, *, mode: int = 0o644) -> None:
    """Create ``path`` with ``data`` on disk (its name is durable only once the
    directory is synced)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def replace_file(path: str, data: bytes, *, mode: int = 0o644) -> None:
    """Atomically and durably replace ``path``: the data is synced before the
    rename, and the directory after it. A hidden ``.tmp-`` file is all a crash
    can leave behind."""
    directory = os.path.dirname(path) or "."
    temporary = os.path.join(directory, f".tmp-{secrets.token_hex(8)}")
    try:
        write_new(temporary, data, mode=mode)
        os.replace(temporary, path)
    except BaseException:  # the temporary file removed, then re-raised
        remove_file(temporary)
        raise
    sync_directory(directory)


def read_file(path: str) -> bytes:
    with open(path, "rb") as stream:
        return stream.read()


def remove_file(path: str) -> None:
    """Remove ``path`` if it is there."""
    with suppress(FileNotFoundError):
        os.unlink(path)
