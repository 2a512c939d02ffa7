"""Progress of a long operator task: named bars a use case advances as it goes.

A use case asks its context's ``progress`` for a bar and advances it; whether
anyone sees it (a terminal) is the composition root's choice, so a task run
without a terminal prints nothing but its one JSON result.
"""

from collections.abc import Generator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


class ProgressBar(Protocol):
    def advance(self, steps: int = 1) -> None:
        """``steps`` more items done."""
        ...


class Progress(Protocol):
    def bar(self, name: str, total: int | None) -> AbstractContextManager[ProgressBar]:
        """A bar for ``total`` items (None: unknown), shown until the block ends."""
        ...


class _Silent:
    def advance(self, steps: int = 1) -> None:
        pass


class NoProgress:
    """Progress nobody sees: every surface but a task on a terminal."""

    @contextmanager
    def bar(self, name: str, total: int | None) -> Generator[ProgressBar]:
        yield _Silent()
