"""The markdown export's directory tree on a local file system (``MarkdownTree``)."""

import asyncio
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from app.features.memory.ports.markdown_tree import MarkdownTree, TreeFile
from app.infra.durable_files import write_new
from app.shared.errors import invalid_argument_error

PARTIAL = ".partial"
"""A file being written ends so: never a ``.md`` file, so an import skips it."""


class LocalMarkdownTree:
    """``{root}/{scope}/{area}/{file}``, each write to a hidden file then renamed."""

    def __init__(self, root: str, scope: str) -> None:
        self._scope = Path(root) / scope

    def files(self) -> Iterator[TreeFile]:
        for area in _entries(self._scope):
            if area.is_dir() and not area.name.startswith("."):
                for entry in _entries(Path(area.path)):
                    if entry.is_file():
                        yield TreeFile(area.name, entry.name)

    async def read(self, file: TreeFile) -> bytes:
        return await asyncio.to_thread(self._read, file)

    def _read(self, file: TreeFile) -> bytes:
        try:
            return (self._scope / file.area / file.file).read_bytes()
        except OSError as exc:
            raise invalid_argument_error(
                "path", f"{file.label} cannot be read ({exc.strerror})"
            ) from exc

    async def write(self, file: TreeFile, data: bytes) -> bool:
        return await asyncio.to_thread(self._write, file, data)

    def _write(self, file: TreeFile, data: bytes) -> bool:
        directory = self._scope / file.area
        path = directory / file.file
        if _holds(path, data):
            return False
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{secrets.token_hex(8)}{PARTIAL}"
        try:
            write_new(partial, data)
            os.replace(partial, path)
        except BaseException:  # the partial file removed, then re-raised
            partial.unlink(missing_ok=True)
            raise
        return True


def open_markdown_tree(root: str, scope: str) -> MarkdownTree:
    return LocalMarkdownTree(root, scope)


def _entries(directory: Path) -> Iterator[os.DirEntry[str]]:
    """The directory's entries as the OS gives them; none when it is absent."""
    try:
        with os.scandir(directory) as entries:
            yield from entries
    except FileNotFoundError:
        return


def _holds(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except FileNotFoundError:
        return False
