"""What marks an audit event: its id, its time as text, an erased entity's digest."""

import hashlib
import itertools
import os
import time
from datetime import UTC, datetime

_COUNTER_BITS = 24
_COUNTER_MASK = (1 << _COUNTER_BITS) - 1


def _reseed() -> None:
    """Draw this process's 48 random bits and restart its counter (after fork too)."""
    global _salt, _count
    _salt = int.from_bytes(os.urandom(6)) << _COUNTER_BITS
    _count = itertools.count(int.from_bytes(os.urandom(3)))


_salt = 0
_count = itertools.count()
_reseed()
os.register_at_fork(after_in_child=_reseed)


def new_event_id(made_ns: int | None = None) -> str:
    """32 hex digits: the microsecond (of ``made_ns``, else now), then 72 bits.

    Those 72 bits are 48 random ones drawn once per process (again in a forked
    child) and a 24-bit counter: ids of one process never repeat (16 million
    events would have to share a microsecond), two processes' meet only if
    their random bits do. Ids are keys, not secrets: no syscall per event.
    Ids of events written one after another sort one after another, so each
    lands at the end of a store's id index instead of a random page of it.
    """
    made = time.time_ns() if made_ns is None else made_ns
    # 7 bytes of microseconds are 14 hex digits (until the year 4253), and
    # one hex() of the whole number costs less than formatting it.
    tail = _salt | (next(_count) & _COUNTER_MASK)
    return ((made // 1000) << 72 | tail).to_bytes(16).hex()


def erasure_key(scope: str | None, entity_id: str | None) -> str:
    """How an erasure names its entity: a digest, so no byte of the id is kept."""
    return hashlib.sha256(f"{scope}\0{entity_id}".encode()).hexdigest()


def stamp(moment: datetime) -> str:
    """A fixed-width UTC timestamp: string order is time order."""
    # A UTC moment's isoformat ends "+00:00": that suffix becomes "Z" (one
    # slice, where a replace() would build another datetime for every event).
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)
