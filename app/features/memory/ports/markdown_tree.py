"""A directory tree of markdown files on the operator's machine: the port the
markdown export and import write and read through."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class TreeFile:
    """One ``{area}/{file}`` of a scope's directory (names as the tree has them)."""

    area: str
    file: str

    @property
    def label(self) -> str:
        return f"{self.area}/{self.file}"


class MarkdownTree(Protocol):
    """``{root}/{scope}/{area}/{file}``; every write replaces a file whole.

    A write lands entirely or not at all (a new file is renamed into place), so
    an interrupted export leaves every file either as it was or as written.
    Writes may wait for ``flush`` (or later writes) to land.
    """

    def files(self) -> Iterator[TreeFile]:
        """Each file under the scope's area directories, read as the walk goes
        (no listing of the whole tree is held); directories whose name starts
        with a dot (an editor's own, ``.obsidian``) are not walked."""
        ...

    async def read(self, file: TreeFile) -> bytes:
        """The file's bytes; raises the caller-facing error when unreadable."""
        ...

    async def write(self, file: TreeFile, data: bytes) -> bool:
        """Store ``data`` as the file (by the next ``flush`` at the latest);
        False (nothing written) when it already holds exactly these bytes."""
        ...

    async def flush(self) -> None:
        """Put every write made so far in place; run it also when interrupted."""
        ...


type MarkdownTrees = Callable[[str, str], MarkdownTree]
"""Opens the tree at a root path for one scope."""
