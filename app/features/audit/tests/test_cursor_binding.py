"""An audit cursor is bound to its query: the subjects, both time bounds and
every filter; read back under the same query it gives the position it holds."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from app.features.audit.domain.pages import decode_position, encode_position, page_of
from app.features.audit.ports import (
    AuditEvent,
    AuditPage,
    AuditSelection,
    Position,
    Subject,
)

KEY = b"k"
AT = datetime(2026, 3, 1, 12, 0, 0, 5, tzinfo=UTC)
QUERY = AuditSelection(
    subjects=(Subject(scope="user", entity_id="alice"),),
    since=datetime(2026, 3, 1, tzinfo=UTC),
    until=datetime(2026, 3, 2, tzinfo=UTC),
    operation="write_file",
    area="notes",
    name="tea",
)


def test_the_same_query_reads_the_position_back() -> None:
    cursor = encode_position(KEY, QUERY, Position(at=AT, id="e|1"))
    assert decode_position(KEY, QUERY, cursor) == Position(at=AT, id="e|1")


@pytest.mark.parametrize(
    "other",
    [
        replace(QUERY, subjects=(Subject(scope="user", entity_id="bob"),)),
        replace(QUERY, since=None),
        replace(QUERY, since=datetime(2026, 2, 1, tzinfo=UTC)),
        replace(QUERY, until=None),
        replace(QUERY, operation=None),
        replace(QUERY, area=None),
        replace(QUERY, name=None),
    ],
)
def test_another_query_does_not_accept_the_cursor(other: AuditSelection) -> None:
    cursor = encode_position(KEY, QUERY, Position(at=AT, id="e1"))
    assert decode_position(KEY, other, cursor) is None


def test_a_page_continues_only_when_the_store_found_more_than_its_limit() -> None:
    found = [
        AuditEvent(f"e{i}", AT, "r", "http", "c", None, "read_file", "user",
                   "alice", "notes", "tea", "ok", None)
        for i in range(3)
    ]  # fmt: skip

    assert page_of(found, 3) == AuditPage(events=found, next_position=None)
    assert page_of(found, 2) == AuditPage(
        events=found[:2], next_position=Position(at=AT, id="e1")
    )
