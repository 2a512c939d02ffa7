"""Progress bars on the terminal (stderr) while an operator task runs."""

import sys
from collections.abc import Generator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress
from rich.text import Text

from app.shared.progress import NoProgress, Progress, ProgressBar


class RateColumn(ProgressColumn):
    """Items per second, as rich measures them over its recent samples."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(
            "" if speed is None else f"{speed:,.0f}/s", style="progress.data.speed"
        )


class _Advance:
    def __init__(self, progress: RichProgress, task: TaskID) -> None:
        self._progress, self._task = progress, task

    def advance(self, steps: int = 1) -> None:
        self._progress.advance(self._task, steps)


class TerminalProgress:
    """One rich bar per ``bar`` block: name, bar, count, rate, elapsed, remaining."""

    def __init__(self, stream: TextIO) -> None:
        self._console = Console(file=stream)

    @contextmanager
    def bar(self, name: str, total: int | None) -> Generator[ProgressBar]:
        with RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self._console,
            transient=False,
        ) as progress:
            yield _Advance(progress, progress.add_task(name, total=total))


def progress_for(surface: str, stream: TextIO | None = None) -> Progress:
    """Bars on ``stream`` (stderr) for a task whose stderr is a terminal, else none."""
    shown = sys.stderr if stream is None else stream
    if surface == "task" and shown.isatty():
        return TerminalProgress(shown)
    return NoProgress()
