"""A mutating call's pending event: one write at a time holds it, and once a
write landed with it no other takes it."""

from datetime import UTC, datetime

from app.features.audit.ports import AuditEvent, PendingEvent

EVENT = AuditEvent(
    "e1", datetime(2026, 12, 1, tzinfo=UTC), "req-1", "http", "claude", None,
    "write_file", "user", "alice", "notes", "tea", "ok", None,
)  # fmt: skip


def test_one_write_claims_it_and_a_landed_write_keeps_it() -> None:
    pending = PendingEvent(lambda: EVENT)

    assert not pending.committed
    assert pending.claim() == EVENT
    assert pending.claim() is None  # held by the first write
    pending.settle(landed=True)
    assert pending.committed
    assert pending.claim() is None


def test_a_write_that_changed_nothing_hands_it_back() -> None:
    pending = PendingEvent(lambda: EVENT)

    assert pending.claim() == EVENT
    pending.settle(landed=False)

    assert not pending.committed
    assert pending.claim() == EVENT
