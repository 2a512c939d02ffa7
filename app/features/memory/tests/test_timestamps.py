"""Formatting and parsing are memoised: one text per instant, one moment per text."""

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from ..domain import format_timestamp, parse_timestamp
from ..domain.timestamps import epoch_micros


def test_the_same_instant_in_another_zone_formats_as_its_utc_text() -> None:
    utc = datetime(2026, 3, 1, 4, 5, 6, 7, tzinfo=UTC)
    shifted = utc.astimezone(timezone(timedelta(hours=5, minutes=30)))

    assert format_timestamp(utc) == "2026-03-01T04:05:06.000007Z"
    assert format_timestamp(shifted) == "2026-03-01T04:05:06.000007Z"
    assert format_timestamp(utc + timedelta(microseconds=1)) == (
        "2026-03-01T04:05:06.000008Z"
    )


def test_a_moment_in_another_zone_formats_as_utc_whatever_the_machines_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Converted to UTC, not to the zone the machine runs in (here +08:00)."""
    shifted = datetime(2026, 3, 1, 9, 35, 6, tzinfo=timezone(timedelta(hours=5.5)))
    monkeypatch.setenv("TZ", "XYZ-8")
    time.tzset()
    try:
        text = format_timestamp(shifted)
    finally:
        monkeypatch.undo()
        time.tzset()

    assert text == "2026-03-01T04:05:06Z"


def test_a_repeated_moment_formats_the_same_each_time() -> None:
    moment = datetime(2026, 3, 1, 4, 5, 6, tzinfo=UTC)

    assert [format_timestamp(moment) for _ in range(3)] == ["2026-03-01T04:05:06Z"] * 3


def test_a_repeated_text_parses_to_the_same_moment_and_a_bad_one_fails_each_time() -> (
    None
):
    text = "2026-03-01T04:05:06.000007Z"

    assert parse_timestamp(text) == parse_timestamp(text)
    assert parse_timestamp(text) == datetime(2026, 3, 1, 4, 5, 6, 7, tzinfo=UTC)
    for _ in range(2):
        with pytest.raises(ValueError):
            parse_timestamp("2026-03-01T04:05:06")


def test_epoch_micros_counts_whole_microseconds_as_an_int() -> None:
    micros = epoch_micros(datetime(2026, 3, 1, 4, 5, 6, 7, tzinfo=UTC))
    assert type(micros) is int
    assert micros == 1_772_337_906_000_007
