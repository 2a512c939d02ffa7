"""The change-feed port: storage that logs each entity's recorded mutations in order."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class LoggedChange:
    """One recorded mutation in its entity's change log; ``seq`` counts on by 1."""

    seq: int
    key: str
    operation: str
    actor: str
    at: datetime
    version: str


@dataclass(frozen=True, slots=True)
class ChangeLogPage:
    """Changes after a position, and ``last``: the newest seq the entity's log
    had issued before they were read (0: none, or all scrubbed)."""

    changes: Sequence[LoggedChange]
    last: int
    voided: Sequence[int] = ()
    """Numbers a write claimed but never landed (GCS): they count, showing nothing."""


@runtime_checkable
class ChangeFeed(Protocol):
    """Storage that logs every recorded mutation per entity, in commit order:
    each mutation given a ``change`` adds one entry (with the mutation, or
    claimed before it on GCS), numbered one past the entity's previous. Entries
    older than ``HistoryRetention.changes_seconds`` are pruned as later writes
    land, never the entity's newest; ``scrub`` erases them."""

    async def changes_after(
        self, prefix: str, after: int, *, now: datetime, limit: int
    ) -> ChangeLogPage:
        """Up to ``limit`` entries of the entity ``prefix`` with seq > ``after``,
        oldest first, of those still within the retention at ``now``."""
        ...
