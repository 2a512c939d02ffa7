"""What an edit changed in a file's text, as whole lines, and its word counts.

A line break folds to a separator, so no word or run spans two lines: the words
of a text are the words of its lines. When two versions share their first and
last lines, the words of the new version are the old ones minus those of the
lines removed plus those of the lines added, and only those lines need
analysing (an appended line, a replaced fact).
"""

from collections import Counter
from dataclasses import dataclass

from .text import MAX_FOLD_GROWTH, fold, words_and_runs

_LINE = b"\n"


@dataclass(frozen=True, slots=True)
class LineChange:
    """``old`` is a kept head, ``removed`` and a kept tail; ``new`` has ``added``."""

    removed: str
    added: str


def _common_prefix(a: bytes, b: bytes) -> int:
    # Bisect on slices: each comparison is one memcmp in C.
    size = min(len(a), len(b))
    if a[:size] == b[:size]:
        return size
    low, high = 0, size  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    size = min(len(a), len(b), limit)
    if a[len(a) - size :] == b[len(b) - size :]:
        return size
    low, high = 0, size
    while high - low > 1:
        middle = (low + high) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle
    return low


def line_change(old: bytes, new: bytes) -> LineChange:
    """The lines ``new`` replaced in ``old``: the shortest middle that starts at a
    line's start and ends before a line break (or at the end), decoded.

    A line break is one byte that no other UTF-8 character contains, so the
    middle decodes as it does inside the whole text.
    """
    shared = _common_prefix(old, new)
    start = old.rfind(_LINE, 0, shared) + 1
    tail = _common_suffix(old, new, min(len(old), len(new)) - shared)
    end = old.find(_LINE, len(old) - tail)
    kept = 0 if end == -1 else len(old) - end
    return LineChange(
        old[start : len(old) - kept].decode(errors="replace"),
        new[start : len(new) - kept].decode(errors="replace"),
    )


@dataclass(frozen=True, slots=True)
class WordChange:
    """Signed word counts and the length change of a field's words."""

    counts: Counter[str]
    length: int


def word_change(change: LineChange, limit: int, whole: int) -> WordChange | None:
    """How the field's words change, or None when the lines alone cannot say.

    ``whole`` is the longer of the two versions' lengths in bytes (never fewer
    than their characters): folded text past
    ``limit`` is not searched, so a field that may reach it is analysed whole;
    so is a change that touches a no-space run (runs are kept as one string).
    """
    if whole * MAX_FOLD_GROWTH > limit:
        return None
    removed, removed_runs = words_and_runs(fold(change.removed))
    added, added_runs = words_and_runs(fold(change.added))
    if removed_runs or added_runs:
        return None
    counts = Counter(added)
    counts.subtract(removed)
    return WordChange(counts, len(added) - len(removed))
