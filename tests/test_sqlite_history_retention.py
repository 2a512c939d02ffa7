"""SQLite prunes history exactly as the retention rule says, write after write.

The triggers keep each key's record count and a bound on its oldest date on the
newest record instead of counting or scanning on every write; here three
processes' worth of connections with different retentions write one file by
turns, with dates on both sides of the age limit, and after every write the
history must be what the rule (docs/history.md, "Retention") makes of the one
before: at most four of the oldest records beyond the count limit go, then at
most four of the oldest past the age limit, never the newest.
"""

import random
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.features.memory.ports import (
    Change,
    FileMetadata,
    HistoryRetention,
    VersionRecord,
    Write,
)
from app.infra.history_records import PRUNE_PER_WRITE
from app.infra.sqlite.storage import open_sqlite_storage

KEY = "user/alice/notes/tea.md"
NOW = datetime.now(UTC).replace(microsecond=0)
RETENTIONS = (HistoryRetention(6, 30), HistoryRetention(9, 0), HistoryRetention(3, 20))


def _record(version: str, meta: FileMetadata) -> VersionRecord:
    return VersionRecord(version, "write_file", "http", False, 1, meta, None)


def _pruned(
    newest_first: list[VersionRecord], retention: HistoryRetention
) -> list[VersionRecord]:
    beyond = max(0, min(PRUNE_PER_WRITE, len(newest_first) - retention.max_versions))
    kept = newest_first[: len(newest_first) - beyond]
    if not retention.max_days:
        return kept
    cutoff = NOW - timedelta(days=retention.max_days)
    old = [r for r in kept[1:] if r.metadata.last_updated < cutoff]
    doomed = {r.version for r in old[-PRUNE_PER_WRITE:]}
    return [r for r in kept if r.version not in doomed]


async def test_every_write_prunes_as_the_rule_says(tmp_path: Path) -> None:
    """Count and age limits, raised and lowered from write to write: exact."""
    path = str(tmp_path / "wenchang.db")
    dates = random.Random(7)
    model: list[VersionRecord] = []  # newest first
    async with AsyncExitStack() as stack:
        storages = [
            await stack.enter_async_context(
                open_sqlite_storage(path, retention=r, search_drain_every=None)
            )
            for r in RETENTIONS
        ]
        expected: str | None = None
        for turn in range(90):
            which = dates.choice((0, 0, 1, 2)) if turn > 20 else 0
            meta = FileMetadata("d", (), (), NOW - timedelta(days=dates.randint(0, 45)))
            write = Write(KEY, b"v", meta, change=Change("write_file", "http", NOW))
            expected = await storages[which].put_if_version(write, expected)
            assert expected is not None
            model = _pruned([_record(expected, meta), *model], RETENTIONS[which])
            records = await storages[0].list_versions(KEY, after=None, limit=100)

            assert [r.version for r in records] == [r.version for r in model], turn


async def test_a_recorded_delete_prunes_past_the_age_limit_too(tmp_path: Path) -> None:
    """A delete is a recorded change: its tombstone's moment judges the age."""
    path = str(tmp_path / "wenchang.db")
    old = FileMetadata("d", (), (), NOW - timedelta(days=45))
    async with (
        open_sqlite_storage(
            path, retention=HistoryRetention(9, 0), search_drain_every=None
        ) as keeping,
        open_sqlite_storage(
            path, retention=HistoryRetention(9, 30), search_drain_every=None
        ) as pruning,
    ):
        version: str | None = None
        for _ in range(3):
            write = Write(KEY, b"v", old, change=Change("write_file", "http", NOW))
            version = await keeping.put_if_version(write, version)
        assert version is not None
        before = await pruning.list_versions(KEY, after=None, limit=100)
        deleted = await pruning.delete_if_version(
            KEY, version, change=Change("delete_file", "http", NOW)
        )
        after = await pruning.list_versions(KEY, after=None, limit=100)

    assert len(before) == 3 and deleted
    assert [(r.operation, r.deleted) for r in after] == [("delete_file", True)]
