"""Audit events for the audit log and buffer tests, built with one call."""

import uuid
from datetime import UTC, datetime

from app.features.audit.ports import AuditEvent, Subject

ALICE = Subject("user", "alice")
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def event(
    subject: Subject | None = ALICE,
    *,
    at: datetime = T0,
    operation: str = "read_file",
    files: tuple[str, ...] = (),
    name: str | None = "tea",
) -> AuditEvent:
    """A successful call of ``operation`` on ``subject``'s ``notes/name`` at ``at``."""
    return AuditEvent(
        id=uuid.uuid4().hex,
        at=at,
        request_id=uuid.uuid4().hex,
        surface="http",
        actor="claude",
        token_id="tok_1",
        operation=operation,
        scope=subject.scope if subject else None,
        entity_id=subject.entity_id if subject else None,
        area="notes",
        name=name,
        outcome="ok",
        version="v1",
        files=files,
    )


class Drafted:
    """A read's events, built when the log takes them (an ``AuditDraft``)."""

    def __init__(self, built: list[AuditEvent]) -> None:
        self.built = built

    @property
    def size(self) -> int:
        return len(self.built)

    def events(self) -> list[AuditEvent]:
        return self.built
