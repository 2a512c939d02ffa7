"""The audit log port, its event, and the pending event a write may commit."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Protocol


# Not frozen: every call builds one, and a frozen dataclass's __init__ (one
# object.__setattr__ per field) costs ~5x a plain one. Nothing mutates an event.
@dataclass(slots=True)
class AuditEvent:
    """One operation call as the audit log keeps it.

    ``entity_id`` says whose memory the call touched (None when the call named
    no scope the caller holds); it decides who may query the event and what a
    purge erases, and is never shown to a caller. ``files`` are the
    ``area/name`` entries an index, list or search call returned, never content.
    """

    id: str
    at: datetime
    request_id: str
    surface: str
    actor: str
    token_id: str | None
    operation: str
    scope: str | None
    entity_id: str | None
    area: str | None
    name: str | None
    outcome: str
    version: str | None
    files: tuple[str, ...] = ()
    files_omitted: int = 0


@dataclass(frozen=True, slots=True)
class Subject:
    """One entity of one scope: whose events a query may see."""

    scope: str
    entity_id: str


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page of events ended: events strictly older come next."""

    at: datetime
    id: str


@dataclass(frozen=True, slots=True)
class AuditSelection:
    subjects: tuple[Subject, ...]
    since: datetime | None = None
    until: datetime | None = None
    operation: str | None = None
    area: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class AuditPage:
    events: Sequence[AuditEvent]
    next_position: Position | None


class EventDraft(Protocol):
    """The events of one call, built only when a log writes them.

    A read's events wait in a buffer anyway: building them there (the
    record, the files a listing served) takes that work off the request.
    """

    @property
    def size(self) -> int:
        """How many events ``events`` gives (what a buffer counts)."""
        ...

    def events(self) -> Sequence[AuditEvent]: ...


class AuditLog(Protocol):
    """Where audit events go: a queryable store, a log stream, or nowhere.

    Events older than the configured retention are never returned and are
    deleted as the store goes. Failures to write raise the BackendUnavailable
    AppError.
    """

    async def record(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        """Keep ``events``.

        With ``durable`` this returns only once the events (and every event
        recorded before them in this process) would survive a crash of this
        process; otherwise they may wait in a buffer for at most one second or
        256 events. If an erasure of an event's entity was recorded at or
        after the time the event happened, the event is dropped instead of
        kept, unless it is the ``memory.purge`` event that follows an erasure.
        """
        ...

    def record_later(self, draft: EventDraft) -> None:
        """Keep the events of ``draft`` as ``record`` does without ``durable``.

        A buffering log builds them when it writes its buffer (within one
        second or 256 events); a log that keeps nothing never builds them.
        """
        ...

    async def query(
        self, selection: AuditSelection, *, before: Position | None, limit: int
    ) -> AuditPage:
        """Up to ``limit`` events of ``selection``'s subjects, newest first.

        Order is ``at`` descending, ties by ``id`` descending; ``before`` skips
        to events strictly after that position in this order. ``since`` and
        ``until`` are inclusive bounds on ``at``; ``operation``, ``area`` and
        ``name`` match exactly when given. A store that keeps nothing to
        query (a log stream, ``none``) raises the AUDIT_UNAVAILABLE AppError.
        """
        ...

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        """Delete every event of ``subject`` that happened at or before ``at``.

        Buffered events are included, and an event of ``subject`` from before
        ``at`` that reaches the store later (another process's buffer) is
        dropped. A log stream cannot take back what it sent: it does nothing.
        """
        ...

    async def flush(self) -> None:
        """Write every buffered event now."""
        ...


# A mutating call's event, offered to storage that commits it with the change.
#
# The audit wrapper makes one for each mutating call and hands it to the use
# case as ``AppContext.audit_event``; the use case puts it on its write's
# ``Change.event``. A storage adapter whose database also holds the audit log
# takes it for a write (``claim``) and says whether that write landed
# (``settle``): the event then commits in the same transaction as the change,
# so a change never exists without its event. At most one write of a call
# holds it at a time, and once one landed no other takes it: a call has
# exactly one event. If no write landed it (another backend, a replayed retry,
# a refusal), the wrapper records it.


class _State(Enum):
    OPEN = "open"
    CLAIMED = "claimed"
    COMMITTED = "committed"


class PendingEvent:
    """The ``ok`` event of a call, built when a write takes it (its version unset)."""

    __slots__ = ("_build", "_state")

    def __init__(self, build: Callable[[], AuditEvent]) -> None:
        self._build = build
        self._state = _State.OPEN

    def claim(self) -> AuditEvent | None:
        """The event, for one write statement to commit; None if taken already."""
        if self._state is not _State.OPEN:
            return None
        self._state = _State.CLAIMED
        return self._build()

    def settle(self, *, landed: bool) -> None:
        """The claiming statement committed (``landed``) or changed nothing."""
        self._state = _State.COMMITTED if landed else _State.OPEN

    @property
    def committed(self) -> bool:
        return self._state is _State.COMMITTED
