"""The operator's files an import reads: plain reads in a worker thread.

A task runs on the machine that holds its input, so these are ordinary file
reads (no adapter). A path that cannot be read is InvalidArgumentError(path).
"""

import asyncio
from pathlib import Path

from app.shared.errors import invalid_argument_error

SUFFIX = ".md"


async def read_source(path: str) -> tuple[str, bytes]:
    """The file at ``path``: its name (for messages) and its bytes."""
    return await asyncio.to_thread(_read_file, Path(path))


async def read_note_tree(path: str) -> list[tuple[str, bytes]]:
    """Every ``.md`` file at or under ``path`` (hidden ones left out), by path.

    Each comes with its path relative to ``path`` (its name for a file).
    """
    return await asyncio.to_thread(_read_tree, Path(path))


def _read_file(path: Path) -> tuple[str, bytes]:
    if not path.is_file():
        raise invalid_argument_error("path", f"{str(path)!r} is not a readable file")
    try:
        return path.name, path.read_bytes()
    except OSError as error:
        raise invalid_argument_error(
            "path", f"{str(path)!r} cannot be read ({error.strerror})"
        ) from None


def _read_tree(root: Path) -> list[tuple[str, bytes]]:
    if root.is_file():
        return [_read_file(root)]
    if not root.is_dir():
        raise invalid_argument_error(
            "path", f"{str(root)!r} is neither a folder nor a file"
        )
    found = sorted(
        path
        for path in root.rglob(f"*{SUFFIX}")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )
    return [(path.relative_to(root).as_posix(), _read_file(path)[1]) for path in found]
