"""Which version records a write prunes (``history_records.expired``).

A record exactly as old as the age limit is kept; one a microsecond older goes.
The newest record is always kept.
"""

from datetime import UTC, datetime, timedelta

from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.infra.history_records import expired, written

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
KEY = "user/ann/notes/tea.md"


def test_a_record_exactly_as_old_as_the_age_limit_is_kept() -> None:
    cutoff = NOW - timedelta(days=30)
    newest_first = [
        written(
            v,
            Write(KEY, b"x", FileMetadata("Tea", (), ("http",), at)),
            Change("write_file", "http", at),
        )
        for v, at in (
            ("4", cutoff - timedelta(days=1)),  # the newest: kept whatever its age
            ("3", cutoff),
            ("2", cutoff - timedelta(microseconds=1)),
            ("1", cutoff - timedelta(days=2)),
        )
    ]
    retention = HistoryRetention(max_versions=100, max_days=30)

    assert expired(newest_first, retention, NOW) == [3, 2]
