"""The markdown export's directory tree on a local file system (``MarkdownTree``)."""

import asyncio
import os
import secrets
from collections.abc import Iterator

from app.features.memory.ports.markdown_tree import MarkdownTree, TreeFile
from app.infra.durable_files import remove_file
from app.shared.errors import invalid_argument_error

BATCH = 500
PARTIAL = ".partial"
"""A file being written ends so: never a ``.md`` file, so an import skips it."""


class LocalMarkdownTree:
    """``{root}/{scope}/{area}/{file}``: each write goes to a hidden partial file;
    every ``BATCH`` writes (and on ``flush``) one ``os.sync`` makes them durable,
    then each is renamed over its file, so even a power cut leaves each file
    as it was or complete, at the cost of one sync per batch, not per file.

    A file's path is a plain string, never a ``pathlib.Path``: on Python 3.12
    pathlib interns every part it parses, and interned strings live forever,
    so a ``Path`` per file grew the process by each file's name (35 MiB at
    100,000 files; ``bench.markdown_tree``)."""

    def __init__(self, root: str, scope: str) -> None:
        self._scope = os.path.join(root, scope)
        self._pending: list[tuple[str, str]] = []

    def files(self) -> Iterator[TreeFile]:
        for area in _entries(self._scope):
            if area.is_dir() and not area.name.startswith("."):
                for entry in _entries(area.path):
                    if entry.is_file():
                        yield TreeFile(area.name, entry.name)

    # Reads and writes of one small file run on the loop's thread: only an
    # operator task opens a tree, nothing else waits on its loop, and a hop to
    # a worker thread per file cost more than the write (``bench.markdown_tree``).
    # The sync of a whole batch runs in a worker thread.
    async def read(self, file: TreeFile) -> bytes:
        return self._read(file)

    def _read(self, file: TreeFile) -> bytes:
        try:
            with open(os.path.join(self._scope, file.area, file.file), "rb") as read:
                return read.read()
        except OSError as exc:
            raise invalid_argument_error(
                "path", f"{file.label} cannot be read ({exc.strerror})"
            ) from exc

    async def write(self, file: TreeFile, data: bytes) -> bool:
        staged = self._stage(file, data)
        if len(self._pending) >= BATCH:
            await self.flush()
        return staged

    async def flush(self) -> None:
        await asyncio.to_thread(self._commit)

    def _stage(self, file: TreeFile, data: bytes) -> bool:
        directory = os.path.join(self._scope, file.area)
        path = os.path.join(directory, file.file)
        if _holds(path, data):
            return False
        os.makedirs(directory, exist_ok=True)
        partial = os.path.join(directory, f".{secrets.token_hex(8)}{PARTIAL}")
        try:
            with open(partial, "xb") as written:
                written.write(data)
        except BaseException:  # the partial file removed, then re-raised
            remove_file(partial)
            raise
        self._pending.append((partial, path))
        return True

    def _commit(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            os.sync()
        for partial, path in pending:
            os.replace(partial, path)


def open_markdown_tree(root: str, scope: str) -> MarkdownTree:
    return LocalMarkdownTree(root, scope)


def _entries(directory: str) -> Iterator[os.DirEntry[str]]:
    """The directory's entries as the OS gives them; none when it is absent."""
    try:
        with os.scandir(directory) as entries:
            yield from entries
    except FileNotFoundError:
        return


def _holds(path: str, data: bytes) -> bool:
    try:
        if os.stat(path).st_size != len(data):
            return False
        with open(path, "rb") as held:
            return held.read() == data
    except FileNotFoundError:
        return False
