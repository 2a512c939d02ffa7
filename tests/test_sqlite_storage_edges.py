"""The SQLite storage port at its edges, on a real file: what the conformance
suite leaves to each adapter (the expiry index, a checkpoint that cannot
finish, the audit log kept in another file)."""

from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, Write
from tests.support.sqlite_file import Opened, opened_database

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
CHANGE = Change("write_file", "http", AT)


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncGenerator[Opened]:
    async with opened_database(tmp_path) as found:
        yield found


def expiring(key: str, day: int) -> Write:
    meta = replace(META, expires_at=datetime(2027, 1, day, 3, 4, 5, 6, tzinfo=UTC))
    return Write(key, b"x", meta, change=CHANGE)


async def test_expiry_moments_read_each_prefix_range_of_the_index(
    opened: Opened,
) -> None:
    """One moment per expiring file under any prefix asked; none for no prefix,
    a file without expiry, or a key outside every range."""
    storage = opened.storage
    await storage.put(expiring("user/ann/notes/a.md", 2))
    await storage.put(expiring("user/ann/notes/b.md", 3))
    await storage.put(expiring("user/bob/notes/a.md", 4))
    await storage.put(expiring("user/bobby/notes/a.md", 5))
    await storage.put(expiring("user/cat/notes/a.md", 6))
    await storage.put(Write("user/bob/notes/c.md", b"y", META, change=CHANGE))

    def days(moments: Sequence[datetime]) -> list[int]:
        return sorted(moment.day for moment in moments)

    assert await storage.expiry_moments([]) == []
    assert days(await storage.expiry_moments(["user/ann/"])) == [2, 3]
    assert days(await storage.expiry_moments(["user/bob/"])) == [4]
    assert days(await storage.expiry_moments(["user/ann/", "user/cat/"])) == [2, 3, 6]
    assert await storage.expiry_moments(["user/dan/"]) == []
