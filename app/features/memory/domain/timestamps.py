"""Timestamps as memory shows them: UTC, ``Z``-suffixed, microseconds when set."""

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_UTC_OFFSET = "+00:00"


def format_timestamp(moment: datetime) -> str:
    # isoformat writes six fractional digits exactly when microseconds are
    # non-zero, as the wire format wants. Every stored moment is already in
    # UTC: its offset suffix is swapped for "Z" without converting.
    if moment.tzinfo is UTC:
        return moment.isoformat().removesuffix(_UTC_OFFSET) + "Z"
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def parse_timestamp(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is UTC:
        return moment
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no UTC offset")
    return moment.astimezone(UTC)


def epoch_micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND
