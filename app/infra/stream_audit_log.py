"""Audit events as JSON lines on a stream (stdout for a log pipeline), or nowhere.

A line is written and flushed when the event is recorded, so nothing waits in
this process. What a log pipeline received cannot be taken back or queried:
an erasure is the pipeline's business, and a query is AUDIT_UNAVAILABLE.
"""

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NoReturn, TextIO

from app.features.audit.ports import (
    AuditEvent,
    AuditSelection,
    EventDraft,
    Position,
    Subject,
)
from app.infra.audit_records import event_to_line
from app.shared.errors import audit_unavailable_error


class StreamAuditLog:
    # The stream is looked up at each write, as print() does: whoever replaced
    # sys.stdout after start-up (a log pipeline, a test's capture) gets the line,
    # and a stream closed since then is never written to.
    def __init__(self, stream: Callable[[], TextIO], *, name: str = "stdout") -> None:
        self._stream = stream
        self._name = name

    async def record(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        self._write(events)

    def record_later(self, draft: EventDraft) -> None:
        self._write(draft.events())

    def _write(self, events: Sequence[AuditEvent]) -> None:
        stream = self._stream()
        stream.write("".join(event_to_line(event) for event in events))
        stream.flush()

    async def query(
        self, selection: AuditSelection, *, before: Position | None, limit: int
    ) -> NoReturn:
        raise audit_unavailable_error(self._name)

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        return None

    async def flush(self) -> None:
        self._stream().flush()


class NoAuditLog:
    """``WENCHANG_AUDIT=none``: events are not kept anywhere."""

    async def record(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        return None

    def record_later(self, draft: EventDraft) -> None:
        return None  # never built: nothing is kept

    async def query(
        self, selection: AuditSelection, *, before: Position | None, limit: int
    ) -> NoReturn:
        raise audit_unavailable_error("none")

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        return None

    async def flush(self) -> None:
        return None
