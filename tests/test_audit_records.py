"""An event's JSON text is exactly the standard encoding of its record.

The JSON-lines, stdout and SQLite logs write events with a C encoder built once
(``json.dumps`` builds one per call): it must write byte for byte what
``json.dumps`` writes of ``event_to_record``, for any text a caller can put in
a field (a request id, a token label, a file name).
"""

import json
from dataclasses import fields
from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.features.audit.domain.marks import stamp
from app.features.audit.ports import AuditEvent
from app.infra.audit_records import event_from_record, event_to_json, event_to_record

AWKWARD = [
    "plain",
    'quote " and \\ backslash',
    "line\nbreak\ttab\r\x00\x01\x1f\x7f",
    "é ü 中文 🍵",
    "\u2028\u2029 separators",
    "",
]


def event(text: str | None, files: tuple[str, ...], at: datetime) -> AuditEvent:
    shown = text or "x"
    return AuditEvent(
        "0123456789abcdef0123456789abcdef",
        at,
        shown,
        "http",
        shown,
        text,
        "list_prefix",
        text,
        text,
        text,
        text,
        "ok",
        text,
        files,
        3,
    )


MOMENTS = [
    datetime(2026, 12, 1, 14, 16, 26, 818046, tzinfo=UTC),
    datetime(2026, 12, 1, 14, 16, 26, tzinfo=UTC),  # no microseconds
    datetime(2026, 12, 1, 15, 16, 26, 5, tzinfo=timezone(timedelta(hours=1))),
]


@pytest.mark.parametrize("text", [*AWKWARD, None])
@pytest.mark.parametrize("at", MOMENTS)
def test_the_json_text_is_json_dumps_of_the_record(
    text: str | None, at: datetime
) -> None:
    written = event(text, tuple(f"{t}/n" for t in AWKWARD), at)
    expected = json.dumps(
        event_to_record(written), ensure_ascii=False, separators=(",", ":")
    )

    assert event_to_json(written) == expected
    assert event_from_record(json.loads(event_to_json(written))) == written


def test_a_subject_is_appended_as_one_more_field() -> None:
    written = event("x", (), MOMENTS[0])
    record = {**event_to_record(written), "subject": "digest"}

    assert event_to_json(written, subject="digest") == json.dumps(
        record, ensure_ascii=False, separators=(",", ":")
    )


@pytest.mark.parametrize("at", MOMENTS)
def test_a_stamp_is_fixed_width_utc_with_microseconds(at: datetime) -> None:
    assert stamp(at) == at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_a_record_holds_every_field_of_an_event() -> None:
    """One field list: a field added to the event is in its record and text."""
    written = event("x", ("notes/a",), MOMENTS[0])

    assert list(event_to_record(written)) == [f.name for f in fields(AuditEvent)]
    assert event_from_record(json.loads(event_to_json(written))) == written


def test_a_record_written_before_files_omitted_existed_reads_as_none_omitted() -> None:
    """Its line lacks the field: the event's default, 0."""
    record = event_to_record(event("x", ("notes/a",), MOMENTS[0]))
    del record["files_omitted"]

    assert event_from_record(record).files_omitted == 0
