"""The SQLite change log stays bounded: each append prunes what the retention let go.

The feed's reads skip entries past the retention anyway, so only the table shows
whether they are still kept; here it is read as another process would.
"""

from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.infra.sqlite.storage import open_sqlite_storage
from tests.support.sqlite_file import sql

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)


def logged(database: Path) -> list[str]:
    rows = sql(database, "SELECT key FROM memory_changes ORDER BY seq")
    return [key for (key,) in rows]


async def test_an_append_prunes_the_entries_past_the_retention(tmp_path: Path) -> None:
    database = tmp_path / "wenchang.db"
    retention = HistoryRetention(changes_seconds=86_400)
    async with open_sqlite_storage(str(database), retention=retention) as storage:

        async def write(name: str, at: datetime) -> None:
            change = Change("write_file", "http", at)
            key = f"user/alice/notes/{name}.md"
            assert await storage.put_if_version(
                Write(key, b"x\n", META, change=change), None
            )

        await write("a", AT)
        await write("b", AT + timedelta(hours=12))
        before = logged(database)
        # a is then 26 hours old (past the day), b 14 (kept)
        await write("c", AT + timedelta(hours=26))

    assert before == ["user/alice/notes/a.md", "user/alice/notes/b.md"]
    assert logged(database) == ["user/alice/notes/b.md", "user/alice/notes/c.md"]


async def test_a_log_written_for_many_retentions_keeps_only_the_retained_entries(
    tmp_path: Path,
) -> None:
    """Each write whose entity's oldest entry is past the retention prunes: a
    log written twice a day for three weeks holds the last day's entries only."""
    database = tmp_path / "wenchang.db"
    retention = HistoryRetention(changes_seconds=86_400)
    async with open_sqlite_storage(str(database), retention=retention) as storage:
        for index in range(42):
            at = AT + timedelta(hours=12 * index)
            change = Change("write_file", "http", at)
            key = f"user/alice/notes/n{index}.md"
            assert await storage.put_if_version(
                Write(key, b"x\n", META, change=change), None
            )

    # n39 is exactly one retention older than n41: at the edge, kept
    assert logged(database) == [f"user/alice/notes/n{i}.md" for i in (39, 40, 41)]


async def test_one_append_after_a_quiet_spell_prunes_a_whole_burst(
    tmp_path: Path,
) -> None:
    """Five entries written within an hour, then nothing for two days: the next
    write prunes all five at once (a few at a time, not one per write, so a burst
    never outlives its retention by the writes that follow it)."""
    database = tmp_path / "wenchang.db"
    retention = HistoryRetention(changes_seconds=86_400)
    async with open_sqlite_storage(str(database), retention=retention) as storage:
        burst = [AT + timedelta(minutes=10 * index) for index in range(5)]
        for index, at in enumerate([*burst, AT + timedelta(days=2)]):
            change = Change("write_file", "http", at)
            key = f"user/alice/notes/n{index}.md"
            assert await storage.put_if_version(
                Write(key, b"x\n", META, change=change), None
            )

    assert logged(database) == ["user/alice/notes/n5.md"]


async def test_an_entitys_prune_leaves_other_entities_logs_alone(
    tmp_path: Path,
) -> None:
    """Retention is pruned per entity: alice's write past the retention drops her
    old entry, never bob's, whose one entry is his log's newest (it carries his
    count on) however old it is."""
    database = tmp_path / "wenchang.db"
    retention = HistoryRetention(changes_seconds=86_400)
    async with open_sqlite_storage(str(database), retention=retention) as storage:
        for entity, at in (
            ("bob", AT),
            ("alice", AT),
            ("alice", AT + timedelta(days=2)),
        ):
            change = Change("write_file", "http", at)
            key = f"user/{entity}/notes/{at.day}.md"
            assert await storage.put_if_version(
                Write(key, b"x\n", META, change=change), None
            )

    assert sorted(logged(database)) == ["user/alice/notes/3.md", "user/bob/notes/1.md"]
