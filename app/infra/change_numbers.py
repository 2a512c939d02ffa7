"""Where an empty change log starts numbering: past every number it ever issued."""

import time


def first_seq() -> int:
    """The first number of an entity's empty log (new, or erased by a purge).

    The wall clock in microseconds: a purged log issued fewer numbers than
    microseconds passed since it started, so a cursor issued before the purge
    meets a gap (CURSOR_EXPIRED) rather than a number used again, and the
    purge keeps nothing of the entity to remember where its log stood.
    """
    return time.time_ns() // 1000
