"""Durable file writes: a file is created or replaced whole, synced, or not at all."""

import os
import secrets
from pathlib import Path


def sync_directory(directory: Path) -> None:
    """Make the names created, renamed or removed in ``directory`` durable."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_new(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Create ``path`` with ``data`` on disk (its name is durable only once the
    directory is synced)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def replace_file(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Atomically and durably replace ``path``: the data is synced before the
    rename, and the directory after it. A hidden ``.tmp-`` file is all a crash
    can leave behind."""
    temporary = path.with_name(f".tmp-{secrets.token_hex(8)}")
    try:
        write_new(temporary, data, mode=mode)
        os.replace(temporary, path)
    except BaseException:  # the temporary file removed, then re-raised
        temporary.unlink(missing_ok=True)
        raise
    sync_directory(path.parent)
