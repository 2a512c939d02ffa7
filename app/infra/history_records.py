"""Version records as the adapters build and prune them (shared pure helpers)."""

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from app.features.memory.ports import (
    Change,
    FileMetadata,
    HistoryRetention,
    VersionRecord,
    Write,
)

PRUNE_PER_WRITE = 4
"""Records one write may remove: more than the one it adds, so history shrinks
back within lowered limits over a few writes, and no write ever does much."""


def _recorded(
    version: str, change: Change, metadata: FileMetadata, data: bytes, *, deleted: bool
) -> VersionRecord:
    return VersionRecord(
        version, change.operation, change.actor, deleted, len(data), metadata, data
    )


def written(version: str, write: Write, change: Change) -> VersionRecord:
    """The record of ``write`` (made by ``change``) that landed as ``version``."""
    data = bytes(write.data)
    return _recorded(version, change, write.metadata, data, deleted=False)


def tombstone(version: str, deleted: FileMetadata, change: Change) -> VersionRecord:
    """The record a delete leaves: the deleted object's metadata, no content."""
    metadata = replace(deleted, last_updated=change.at)
    return _recorded(version, change, metadata, b"", deleted=True)


def without_data(record: VersionRecord) -> VersionRecord:
    return replace(record, data=None)


def expired(
    newest_first: Sequence[VersionRecord], retention: HistoryRetention, now: datetime
) -> list[int]:
    """Positions in ``newest_first`` to remove, oldest first, at most a few.

    Up to ``PRUNE_PER_WRITE`` beyond the count limit, then up to as many of
    the rest past the age limit (as SQLite's triggers do). The newest record
    (the current version or the tombstone) is always kept.
    """
    older = range(len(newest_first) - 1, 0, -1)
    by_count = [p for p in older if p >= retention.max_versions][:PRUNE_PER_WRITE]
    if not retention.max_days:
        return by_count
    cutoff = now - timedelta(days=retention.max_days)
    by_age = [
        position
        for position in older
        if position not in by_count
        and newest_first[position].metadata.last_updated < cutoff
    ]
    return by_count + by_age[:PRUNE_PER_WRITE]
