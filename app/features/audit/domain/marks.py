"""What marks an audit event: its id, its time as text, an erased entity's digest."""

import hashlib
import os
import time
from datetime import UTC, datetime, timedelta
from functools import lru_cache


def new_event_id(made_ns: int | None = None) -> str:
    """32 hex digits: the microsecond (of ``made_ns``, else now), then 72 random bits.

    Ids of events written one after another sort one after another, so each
    lands at the end of a store's id index instead of a random page of it.
    """
    made = time.time_ns() if made_ns is None else made_ns
    # 7 bytes of microseconds are 14 hex digits (until the year 4253), and
    # one hex() of both parts costs less than formatting the number.
    return ((made // 1000).to_bytes(7) + os.urandom(9)).hex()


@lru_cache(maxsize=1024)
def erasure_key(scope: str | None, entity_id: str | None) -> str:
    """How an erasure names its entity: a digest, so no byte of the id is kept."""
    return hashlib.sha256(f"{scope}\0{entity_id}".encode()).hexdigest()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    """A fixed-width UTC timestamp: string order is time order."""
    # Every event pays it, and events come many to a second: the text of the
    # second is made once (isoformat, a printf per field), the microseconds
    # appended to it.
    utc = moment if moment.tzinfo is UTC else moment.astimezone(UTC)
    since = utc - _EPOCH
    return f"{_second(since.days, since.seconds)}.{since.microseconds:06d}Z"


@lru_cache(maxsize=64)
def _second(days: int, seconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of the second ``days`` and ``seconds`` after 1970."""
    moment = _EPOCH + timedelta(days=days, seconds=seconds)
    return moment.isoformat(timespec="seconds")[:-6]  # without "+00:00"


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)
