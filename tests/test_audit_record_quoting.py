"""Record text stays exact while repeated who-and-what texts are quoted once.

``event_to_json`` keeps the quoted form of the fields that repeat (surface,
actor, token, operation, scope, entity, outcome) and forgets them when the memo
is full; a file's area and name are never kept.
"""

import json
from datetime import UTC, datetime

from app.features.audit.ports import AuditEvent
from app.infra import audit_records
from app.infra.audit_records import event_to_json, event_to_record


def _event(
    actor: str, area: str, name: str, *, operation: str = "read_file"
) -> AuditEvent:
    return AuditEvent(
        "0123456789abcdef0123456789abcdef",
        datetime(2026, 12, 1, 14, 16, 26, 818046, tzinfo=UTC),
        "r" * 32,
        "http",
        actor,
        "tok_1",
        operation,
        "user",
        "alice",
        area,
        name,
        "ok",
        "v1",
    )


def _dumped(event: AuditEvent) -> str:
    return json.dumps(event_to_record(event), ensure_ascii=False, separators=(",", ":"))


def test_text_is_exact_across_a_full_memo() -> None:
    events = [
        _event(f'agent "{i}" é\n', f"area-{i}", f"name-{i}")
        for i in range(audit_records.MAX_QUOTED * 2 + 3)
    ]

    assert [event_to_json(e) for e in events] == [_dumped(e) for e in events]
    assert len(audit_records._QUOTED) <= audit_records.MAX_QUOTED  # pyright: ignore[reportPrivateUsage]


def test_a_file_area_and_name_are_never_kept() -> None:
    event_to_json(_event("agent", "secret-area", "secret-name"))

    kept = audit_records._QUOTED  # pyright: ignore[reportPrivateUsage]
    assert "secret-area" not in kept and "secret-name" not in kept
    assert "agent" in kept


def memo_sizes() -> tuple[int, int]:
    quoted = audit_records._QUOTED  # pyright: ignore[reportPrivateUsage]
    who = audit_records._WHO  # pyright: ignore[reportPrivateUsage]
    return len(quoted), len(who)


def test_the_memos_never_hold_more_than_their_bound() -> None:
    """New texts fill the quoted memo; new runs of known texts the who memo."""
    bound = audit_records.MAX_QUOTED
    for i in range(bound + 2):
        event_to_json(_event(f"agent-{i}", "notes", "tea"))
        assert max(memo_sizes()) <= bound
    for i in range(bound + 2):
        event_to_json(
            _event(f"agent-{i % 40}", "notes", "tea", operation=f"op-{i // 40}")
        )
        assert max(memo_sizes()) <= bound
