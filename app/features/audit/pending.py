"""A mutating call's audit event, offered to storage that commits it with the change.

The audit wrapper opens one for each mutating call. A storage adapter whose
database also holds the audit log takes it for a write statement (``claim``)
and says whether that statement landed (``settle``): the event then commits in
the same transaction as the change, so a change never exists without its
event. At most one write of a call holds it at a time, and once one landed no
other takes it: a call has exactly one event. If no write landed it (another
backend, a replayed retry, a refusal), the wrapper records the event itself.
"""

from collections.abc import Callable
from contextvars import ContextVar, Token
from enum import Enum

from .ports import AuditEvent


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


_PENDING: ContextVar[PendingEvent | None] = ContextVar(
    "wenchang_pending_audit_event", default=None
)


def open_pending(event: PendingEvent | None) -> Token[PendingEvent | None]:
    """Offer ``event`` to the writes of the current call."""
    return _PENDING.set(event)


def close_pending(token: Token[PendingEvent | None]) -> None:
    _PENDING.reset(token)


def pending_event() -> PendingEvent | None:
    """The current call's event, if it is a mutation whose event is not written."""
    return _PENDING.get()
