"""A logged change as the feed shows it, and whether a page follows its cursor."""

from collections.abc import Callable

from app.features.memory.domain import format_timestamp
from app.features.memory.domain.keys import split_key
from app.features.memory.ports import ChangeLogPage, LoggedChange

from .schemas import FileChange


def render_change(entry: LoggedChange, cursor: Callable[[int], str]) -> FileChange:
    scope, area, name = split_key(entry.key) or ("", "", entry.key)
    return FileChange(
        cursor=cursor(entry.seq),
        at=format_timestamp(entry.at),
        operation=entry.operation,
        scope=scope,
        area=area,
        name=name,
        version=entry.version,
        actor=entry.actor,
    )


def follows(page: ChangeLogPage, after: int) -> bool:
    """Whether ``page`` continues right after ``after`` with nothing missed.

    Seqs count on without gaps, so the first entry (or voided number) must be
    ``after + 1``;
    an empty page is caught up only when the log's newest is ``after`` itself
    (newer: they were pruned before the page was read; older: the log was
    erased since the cursor was issued). ``after`` 0 is the log's start.
    """
    if after == 0:
        return True
    numbers = _numbers(page)
    if numbers:
        return numbers[0] == after + 1
    return page.last == after


def page_end(page: ChangeLogPage, after: int) -> int:
    """The number a page's next cursor stands after (its last shown or voided)."""
    numbers = _numbers(page)
    return numbers[-1] if numbers else after


def _numbers(page: ChangeLogPage) -> list[int]:
    return sorted([entry.seq for entry in page.changes] + list(page.voided))
