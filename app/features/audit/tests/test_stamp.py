"""An event's stamp: fixed width, UTC, the second's text made once per second."""

import random
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from ..domain.marks import parse_stamp, stamp


def _expected(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def test_stamp_is_the_utc_isoformat_with_six_digits_for_any_moment() -> None:
    chooser = random.Random(17)
    start = datetime(1900, 1, 1, tzinfo=UTC)
    moments = [
        start + timedelta(microseconds=chooser.randrange(0, 200 * 365 * 86400 * 10**6))
        for _ in range(2000)
    ]
    moments += [datetime(2026, 12, 1, 23, 59, 59, 999999, tzinfo=UTC)]
    moments += [datetime(2026, 12, 2, tzinfo=UTC)]

    assert [stamp(m) for m in moments] == [_expected(m) for m in moments]


def test_moments_of_one_second_share_its_text_and_differ_in_microseconds() -> None:
    second = datetime(2026, 12, 1, 14, 16, 26, tzinfo=UTC)

    assert stamp(second) == "2026-12-01T14:16:26.000000Z"
    assert stamp(second.replace(microsecond=818046)) == "2026-12-01T14:16:26.818046Z"


def test_another_zone_is_stamped_in_utc() -> None:
    moment = datetime(2026, 12, 1, 15, 16, 26, 5, tzinfo=timezone(timedelta(hours=1)))

    assert stamp(moment) == "2026-12-01T14:16:26.000005Z"


def test_the_hosts_own_zone_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamped and parsed back in UTC on a host whose local time is not UTC."""
    moment = datetime(2026, 3, 1, 23, 30, 0, 7, tzinfo=timezone(timedelta(hours=5)))
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        text = stamp(moment)
        parsed = parse_stamp(text)
    finally:
        monkeypatch.undo()
        time.tzset()

    assert text == "2026-03-01T18:30:00.000007Z"
    assert (parsed, parsed.utcoffset()) == (moment, timedelta(0))
