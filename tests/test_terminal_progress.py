"""A task's progress bars on its terminal (``app/server/terminal_progress.py``):
one line per bar left on the stream when its block ends, with the bar's name,
its count of its total and its rate; the pseudo-terminal runs are in
``test_markdown_progress.py``."""

import io

from app.server.terminal_progress import TerminalProgress


def test_a_bar_leaves_its_name_count_and_rate_on_the_task_s_stream() -> None:
    stream = io.StringIO()
    with TerminalProgress(stream).bar("export", total=3) as bar:
        bar.advance()
        bar.advance(2)

    [line] = stream.getvalue().splitlines()
    name, _, count, rate, *_ = line.split()
    assert (name, count) == ("export", "3/3")
    assert rate.endswith("/s")
