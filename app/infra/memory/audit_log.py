"""In-memory audit log for tests and trials: every event kept in this process."""

from collections.abc import Sequence
from datetime import datetime

from app.features.audit.domain import PURGE
from app.features.audit.domain.pages import page_of
from app.features.audit.ports import (
    AuditEvent,
    AuditPage,
    AuditSelection,
    EventDraft,
    Position,
    Subject,
)


def _selected(event: AuditEvent, selection: AuditSelection) -> bool:
    subject = Subject(event.scope or "", event.entity_id or "")
    return (
        event.entity_id is not None
        and subject in selection.subjects
        and (selection.since is None or event.at >= selection.since)
        and (selection.until is None or event.at <= selection.until)
        and (selection.operation is None or event.operation == selection.operation)
        and (selection.area is None or event.area == selection.area)
        and (selection.name is None or event.name == selection.name)
    )


class MemoryAuditLog:
    """Keeps every event (no retention); ``events`` is what was recorded, in order."""

    def __init__(self) -> None:
        self.events: list[AuditEvent] = []
        self._erased: dict[Subject, datetime] = {}

    async def record(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        self._keep(events)

    def _keep(self, events: Sequence[AuditEvent]) -> None:
        for event in events:
            subject = Subject(event.scope or "", event.entity_id or "")
            erased = self._erased.get(subject)
            if erased is None or event.at > erased or event.operation == PURGE:
                self.events.append(event)

    def record_later(self, draft: EventDraft) -> None:
        self._keep(draft.events())

    async def query(
        self, selection: AuditSelection, *, before: Position | None, limit: int
    ) -> AuditPage:
        chosen = sorted(
            (event for event in self.events if _selected(event, selection)),
            key=lambda event: (event.at, event.id),
            reverse=True,
        )
        if before is not None:
            chosen = [e for e in chosen if (e.at, e.id) < (before.at, before.id)]
        return page_of(chosen, limit)

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        self._erased[subject] = max(self._erased.get(subject, at), at)
        self.events = [
            event
            for event in self.events
            if event.at > at
            or Subject(event.scope or "", event.entity_id or "") != subject
        ]

    async def flush(self) -> None:
        return None
