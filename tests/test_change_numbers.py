"""Where an empty change log starts: the wall clock in microseconds.

The unit stays microseconds across versions: a log purged after an upgrade
must still start past every number the old version's log issued, so a cursor
taken before the purge meets a gap (CURSOR_EXPIRED), never a number used again.
"""

import time

from app.infra.change_numbers import first_seq


def test_an_empty_log_starts_at_the_clock_in_microseconds() -> None:
    before = time.time_ns() // 1000
    first = first_seq()
    after = time.time_ns() // 1000

    assert type(first) is int
    assert before <= first <= after
