"""A task's progress bars on its terminal (``app/server/terminal_progress.py``):
one line per bar left on the stream when its block ends, with the bar's name,
its count of its total, its rate, the time it took and the time left; the
pseudo-terminal runs are in ``test_markdown_progress.py``."""

import io
import re

from app.server.terminal_progress import TerminalProgress


def test_a_bar_leaves_its_name_count_rate_and_times_on_the_task_s_stream() -> None:
    stream = io.StringIO()
    with TerminalProgress(stream).bar("export", total=3) as bar:
        bar.advance()
        bar.advance(2)

    [line] = stream.getvalue().splitlines()
    name, _, count, rate, elapsed, remaining = line.split()
    assert (name, count) == ("export", "3/3")
    assert rate.endswith("/s")
    assert re.fullmatch(r"\d+:\d\d:\d\d", elapsed)
    assert re.fullmatch(r"\d+:\d\d:\d\d", remaining)
