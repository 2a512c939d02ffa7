"""``python -m bench.storage_writes C N``: what SQLite spends per write at C writers.

``PYTHONPATH=<another source tree> python bench/storage_writes.py C N`` measures
that tree's storage the same way (e.g. a ``git worktree`` of an older commit).

In process, no HTTP: C concurrent writers, each on a file of its own, each
doing N appends as the use case does (read, then a version-guarded write with
its change record and, as the server's writes do, its audit event staged in
the same transaction). Prints commits per write (the group-commit counter; 1.00
where there is none), WAL frames per write (auto-checkpoint off, so the log
holds every frame) and the process's CPU per write, sync included; then which
b-tree (table or index, from SQLite's ``dbstat`` after the run) each frame
wrote, per write: ``sqlite_schema`` is page 1 (the header, rewritten when the
file grows or the free list changes), and a page freed by a prune and reused
by another table counts for the table that holds it at the end.
"""

import asyncio
import sqlite3
import struct
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.features.audit.ports import AuditEvent, PendingEvent
from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.sqlite.storage import open_sqlite_storage

META = FileMetadata("Tea", ("bench",), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
BASE = "# Tea\n\n- [stated] Prefers green tea in the morning.\n"
CHANGE = Change("append_line", "http", META.last_updated)


EVENT = AuditEvent(
    *("0" * 32, META.last_updated, "1" * 32, "http", "http", "tok_bench"),
    *("append_line", "user", "bench", "notes", "tea", "ok", None),
)
"""What a server's append stages with its write (id, request, actor, file)."""


def _pages_by_tree(database: Path) -> list[tuple[str, int]]:
    """How many frames of the log each b-tree's pages took, most first."""
    log = Path(f"{database}-wal").read_bytes()
    size = struct.unpack(">I", log[8:12])[0]
    pages = [
        struct.unpack(">I", log[at : at + 4])[0]
        for at in range(32, len(log) - size - 23, size + 24)
    ]
    connection = sqlite3.connect(database)
    try:
        owner = dict(connection.execute("SELECT pageno, name FROM dbstat"))
    finally:
        connection.close()
    return Counter(owner.get(page, "(free list)") for page in pages).most_common()


def _wal_frames(database: Path, mode: str = "PASSIVE") -> int:
    connection = sqlite3.connect(database)
    try:
        return int(connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()[1])
    finally:
        connection.close()


async def _writer(storage: Any, key: str, appends: int) -> None:
    for number in range(appends):
        stored = await storage.get(key)
        body = stored.data.decode() + f"- [stated] fact {number}\n"
        body = BASE if number % 50 == 49 else body  # files stay small
        event = PendingEvent(lambda: EVENT)  # each call has its own
        change = Change(CHANGE.operation, CHANGE.actor, CHANGE.at, event=event)
        write = Write(key, body.encode(), META, change=change)
        assert await storage.put_if_version(write, stored.version) is not None


async def measure(database: Path, writers: int, appends: int) -> str:
    # No background search drain: its own commits would checkpoint the log.
    async with open_sqlite_storage(str(database), search_drain_every=None) as storage:
        await storage.share_audit_log(str(database), lambda: None)
        keys = [f"user/w{n}/notes/tea.md" for n in range(writers)]
        for key in keys:
            await storage.put_if_version(Write(key, BASE.encode(), META), None)
        group = storage.group_commit
        await group.call(lambda db: db.execute("PRAGMA wal_autocheckpoint = 0"))
        _wal_frames(database, "TRUNCATE")
        before = group.transactions
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(_writer(storage, key, appends) for key in keys))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        writes = writers * appends
        commits = group.transactions - before
        trees = " ".join(
            f"{name}={count / writes:.2f}" for name, count in _pages_by_tree(database)
        )
        return (
            f"writers={writers} writes={writes} commits/write={commits / writes:.2f} "
            f"WAL frames/write={_wal_frames(database) / writes:.1f} "
            f"CPU us/write={cpu / writes * 1e6:.0f} writes/s={writes / wall:.0f}\n"
            f"frames/write by b-tree: {trees}"
        )


def main(argv: list[str]) -> int:
    writers, appends = int(argv[0]), int(argv[1])
    with tempfile.TemporaryDirectory(prefix="wenchang-storage-writes-") as scratch:
        print(asyncio.run(measure(Path(scratch) / "w.db", writers, appends)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
