"""Timestamps as memory shows them: UTC, ``Z``-suffixed, microseconds when set."""

from datetime import UTC, datetime, timedelta
from functools import lru_cache

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_UTC_OFFSET = "+00:00"


@lru_cache(maxsize=8192)
def format_timestamp(moment: datetime) -> str:
    # Memoised: a read formats the stored moment of its file and an index one
    # per entry, the same moments request after request, and isoformat (a
    # printf per field) is most of a read's formatting. Equal datetimes are
    # the same instant, whose text is the same. isoformat writes six fractional
    # digits exactly when microseconds are non-zero, as the wire format wants,
    # at a third of strftime's cost. Every stored moment is already in UTC:
    # its offset suffix is swapped for "Z" without converting.
    if moment.tzinfo is UTC:
        return moment.isoformat().removesuffix(_UTC_OFFSET) + "Z"
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


@lru_cache(maxsize=8192)
def parse_timestamp(text: str) -> datetime:
    # Memoised like format_timestamp: every read and index entry parses its
    # stored moment, the same texts over and over (a datetime is immutable).
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is UTC:
        return moment
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no UTC offset")
    return moment.astimezone(UTC)


def epoch_micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND
