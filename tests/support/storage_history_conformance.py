"""Version history behaviours of the Storage port, once for all adapters.

Mixed into ``StorageConformance``: a record exists exactly for each mutation
that landed with a change (a delete leaves a tombstone), newest first; losing
writers leave none; retention prunes old records but never the newest; a
scrub erases the history of the keys under its prefix.
"""

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.features.memory.ports import (
    Change,
    FileMetadata,
    HistoryRetention,
    Storage,
    VersionRecord,
    Write,
)
from tests.support.storage_adapters import AdapterUnderTest

KEY = "user/alice/notes/tea.md"
NOW = datetime.now(UTC).replace(microsecond=0)
META = FileMetadata("Tea ☕", ("green", "绿茶"), ("mcp",), NOW)


def change(operation: str, actor: str = "claude-desktop", at: datetime = NOW) -> Change:
    return Change(operation, actor, at)


async def history(storage: Storage, key: str = KEY) -> list[VersionRecord]:
    return list(await storage.list_versions(key, after=None, limit=1000))


async def _race[T](calls: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    return list(await asyncio.gather(*calls))


async def _lifecycle(storage: Storage) -> list[str]:
    """create -> append -> replace -> delete; the versions, tombstone last."""
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None
    second = await storage.put_if_version(
        Write(KEY, b"one\ntwo\n", META, change=change("append_line", "http")), first
    )
    assert second is not None
    third = await storage.put_if_version(
        Write(KEY, b"uno\ntwo\n", META, change=change("replace_fact")), second
    )
    assert third is not None
    later = NOW + timedelta(seconds=5)
    deleted = await storage.delete_if_version(
        KEY, third, change=change("delete_file", "mcp", later)
    )
    assert deleted
    return [first, second, third]


class StorageHistoryConformance:
    """History cases of the Storage port contract; supply ``adapter``."""

    async def test_each_landed_mutation_leaves_one_record_newest_first(
        self, adapter: AdapterUnderTest
    ) -> None:
        """create, append, replace, delete: four records, the tombstone first."""
        versions = await _lifecycle(adapter.storage)

        records = await history(adapter.storage)

        assert [r.operation for r in records] == [
            "delete_file",
            "replace_fact",
            "append_line",
            "write_file",
        ]
        assert [r.version for r in records[1:]] == versions[::-1]
        assert [r.actor for r in records] == [
            "mcp",
            "claude-desktop",
            "http",
            "claude-desktop",
        ]
        assert [(r.deleted, r.size) for r in records] == [
            (True, 0),
            (False, 8),
            (False, 8),
            (False, 4),
        ]
        assert all(r.data is None for r in records)
        assert all(r.call == "" for r in records)  # changes made without a call key
        assert records[0].version not in versions
        assert records[0].metadata == replace(
            META, last_updated=NOW + timedelta(seconds=5)
        )
        assert records[1].metadata == META

    async def test_every_recorded_version_reads_back_with_its_content(
        self, adapter: AdapterUnderTest
    ) -> None:
        """get_version returns the content as it stood; a tombstone has none."""
        versions = await _lifecycle(adapter.storage)
        records = await history(adapter.storage)

        contents = [(await adapter.storage.get_version(KEY, v)) for v in versions]
        tomb = await adapter.storage.get_version(KEY, records[0].version)

        assert [c.data if c else None for c in contents] == [
            b"one\n",
            b"one\ntwo\n",
            b"uno\ntwo\n",
        ]
        assert tomb is not None and tomb.deleted and tomb.data == b""
        assert await adapter.storage.get(KEY) is None
        assert await adapter.storage.count("user/alice/") == 0
        assert await adapter.storage.list_page("user/", start_after=None, limit=9) == []

    async def test_the_current_version_reads_back_and_heads_each_page(
        self, adapter: AdapterUnderTest
    ) -> None:
        """get_version of the version a file stands at: its record and body; a
        first page of n records holds it and the n - 1 before it."""
        storage = adapter.storage
        versions: list[str] = []
        bodies = (b"one\n", b"one\ntwo\n", b"one\ntwo\nthree\n")
        for n, data in enumerate(bodies):
            operation = "append_line" if versions else "write_file"
            write = Write(KEY, data, META, change=change(operation))
            version = await storage.put_if_version(write, versions[-1] if n else None)
            assert version is not None
            versions.append(version)

        current = await storage.get_version(KEY, versions[-1])

        assert current is not None and not current.deleted
        assert (current.version, current.data) == (versions[-1], bodies[-1])
        assert current.operation == "append_line"
        for limit in (1, 2):
            page = await storage.list_versions(KEY, after=None, limit=limit)
            assert [r.version for r in page] == versions[::-1][:limit]

    async def test_unknown_versions_and_keys_have_no_record(
        self, adapter: AdapterUnderTest
    ) -> None:
        """An unknown version, a foreign version or a key never written: nothing."""
        await _lifecycle(adapter.storage)
        other = await adapter.storage.put_if_version(
            Write("user/alice/notes/other.md", b"x", META, change=change("write_file")),
            None,
        )
        assert other is not None

        assert await adapter.storage.get_version(KEY, other) is None
        assert await adapter.storage.get_version(KEY, "no-such-version") is None
        assert await adapter.storage.get_version(KEY, "123") is None
        assert await adapter.storage.list_versions(KEY, after="123", limit=9) == []
        assert await history(adapter.storage, "user/alice/notes/never.md") == []

    async def test_pages_continue_after_the_last_version_seen(
        self, adapter: AdapterUnderTest
    ) -> None:
        """``after`` continues with the next older record; pages never overlap."""
        await _lifecycle(adapter.storage)
        everything = [r.version for r in await history(adapter.storage)]

        pages: list[str] = []
        after: str | None = None
        for _ in range(len(everything) + 1):  # a walk going round in circles ends
            page = await adapter.storage.list_versions(KEY, after=after, limit=3)
            pages += [r.version for r in page]
            if len(page) < 3:
                break
            after = page[-1].version

        assert pages == everything

    async def test_a_failed_precondition_leaves_no_record(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Stale writes and deletes, and a create over a file, record nothing."""
        base = await adapter.storage.put_if_version(
            Write(KEY, b"base", META, change=change("write_file")), None
        )
        current = await adapter.storage.put_if_version(
            Write(KEY, b"next", META, change=change("write_file")), base
        )
        assert base is not None and current is not None

        stale = await adapter.storage.put_if_version(
            Write(KEY, b"lost", META, change=change("append_line")), base
        )
        again = await adapter.storage.put_if_version(
            Write(KEY, b"lost", META, change=change("write_file")), None
        )
        gone = await adapter.storage.delete_if_version(
            KEY, base, change=change("delete_file")
        )

        assert (stale, again, gone) == (None, None, False)
        assert [r.version for r in await history(adapter.storage)] == [current, base]

    async def test_a_file_created_again_after_a_delete_continues_its_history(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Create over a deleted key: the tombstone stays in the history."""
        versions = await _lifecycle(adapter.storage)

        again = await adapter.storage.put_if_version(
            Write(KEY, b"again", META, change=change("restore_version")), None
        )

        assert again is not None and again not in versions
        records = await history(adapter.storage)
        assert [r.operation for r in records][:2] == ["restore_version", "delete_file"]
        assert len(records) == 5
        stored = await adapter.storage.get(KEY)
        assert stored is not None and stored.version == again

    async def test_writes_without_a_change_add_no_record_and_keep_the_rest(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Seeding writes are not history, and never erase the history before."""
        tracked = await adapter.storage.put_if_version(
            Write(KEY, b"tracked", META, change=change("write_file")), None
        )
        assert tracked is not None
        untracked = await adapter.storage.put(Write(KEY, b"seeded", META))
        kept_while_seeded = [r.version for r in await history(adapter.storage)]
        final = await adapter.storage.put_if_version(
            Write(KEY, b"final", META, change=change("append_line")), untracked
        )

        records = await history(adapter.storage)

        assert kept_while_seeded == [tracked]
        assert [r.version for r in records] == [final, tracked]
        kept = await adapter.storage.get_version(KEY, tracked)
        assert kept is not None and kept.data == b"tracked"

    async def test_racing_writers_leave_one_record_for_the_winner(
        self, adapter: AdapterUnderTest
    ) -> None:
        """16 writes at one version race (two clients): one new record."""
        base = await adapter.storage.put_if_version(
            Write(KEY, b"base", META, change=change("write_file")), None
        )
        async with adapter.sibling() as other:
            results = await _race(
                [
                    (adapter.storage if n % 2 else other).put_if_version(
                        Write(
                            KEY,
                            f"racer {n}".encode(),
                            META,
                            change=change("append_line"),
                        ),
                        base,
                    )
                    for n in range(16)
                ]
            )

        winners = [v for v in results if v is not None]
        assert len(winners) == 1
        assert [r.version for r in await history(adapter.storage)] == [winners[0], base]

    async def test_racing_deletes_leave_one_tombstone(
        self, adapter: AdapterUnderTest
    ) -> None:
        """16 deletes at one version race: one tombstone."""
        base = await adapter.storage.put_if_version(
            Write(KEY, b"base", META, change=change("write_file")), None
        )
        assert base is not None
        async with adapter.sibling() as other:
            results = await _race(
                [
                    (adapter.storage if n % 2 else other).delete_if_version(
                        KEY, base, change=change("delete_file")
                    )
                    for n in range(16)
                ]
            )

        assert results.count(True) == 1
        records = await history(adapter.storage)
        assert [r.deleted for r in records] == [True, False]

    async def test_retention_keeps_at_most_max_versions_and_never_the_newest(
        self, adapter: AdapterUnderTest
    ) -> None:
        """With max_versions 3, ten writes keep the newest three records."""
        async with adapter.retaining(HistoryRetention(3, 0)) as storage:
            versions: list[str] = []
            expected: str | None = None
            for n in range(10):
                expected = await storage.put_if_version(
                    Write(KEY, f"v{n}".encode(), META, change=change("write_file")),
                    expected,
                )
                assert expected is not None
                versions.append(expected)

            records = await history(storage)

            assert [r.version for r in records] == versions[::-1][:3]
            assert await storage.get_version(KEY, versions[0]) is None

    async def test_retention_drops_old_records_but_not_the_current_version(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Records older than max_days go on the next write; the newest stays."""
        old = replace(META, last_updated=NOW - timedelta(days=40))
        async with adapter.retaining(HistoryRetention(100, 30)) as storage:
            first = await storage.put_if_version(
                Write(
                    KEY, b"old", old, change=change("write_file", at=old.last_updated)
                ),
                None,
            )
            assert first is not None
            assert [r.version for r in await history(storage)] == [first]
            second = await storage.put_if_version(
                Write(KEY, b"new", META, change=change("write_file")), first
            )

            assert [r.version for r in await history(storage)] == [second]

    async def test_retention_drops_old_records_wherever_they_are_a_few_per_write(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Old records between newer ones go too, oldest first, at most four a
        write, and a lowered count limit is reached over a few writes."""
        ages = [1, 50, 2, 60, 3, 70, 80, 90, 4, 95, 5]  # days, oldest record first
        async with adapter.retaining(HistoryRetention(100, 30)) as storage:
            versions: list[str] = []
            expected: str | None = None
            made = change("write_file", at=NOW - timedelta(days=100))
            for days in ages:
                meta = replace(META, last_updated=NOW - timedelta(days=days))
                write = Write(KEY, b"v", meta, change=made)
                expected = await storage.put_if_version(write, expected)
                assert expected is not None
                versions.append(expected)
            kept = [v for v, days in zip(versions, ages, strict=True) if days < 30]
            gone_first = [
                v for v, days in zip(versions, ages, strict=True) if days > 30
            ]

            assert [r.version for r in await history(storage)] == versions[::-1]
            fresh = Write(KEY, b"now", META, change=change("write_file"))
            expected = await storage.put_if_version(fresh, expected)
            assert expected is not None
            remaining = {r.version for r in await history(storage)}
            left = [v for v in gone_first if v in remaining]

            assert set(kept) | {expected} <= remaining
            assert len(gone_first) - len(left) <= 4
            assert left == gone_first[len(gone_first) - len(left) :]
            for _ in range(2):
                fresh = Write(KEY, b"now", META, change=change("write_file"))
                expected = await storage.put_if_version(fresh, expected)
                assert expected is not None
            remaining = {r.version for r in await history(storage)}
            assert remaining.isdisjoint(gone_first) and set(kept) <= remaining

    async def test_a_recorded_delete_prunes_as_a_write_does(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A delete is a recorded change: the records past the age limit at
        its time go with it, its tombstone stays (docs/history.md)."""
        old = replace(META, last_updated=NOW - timedelta(days=40))
        made = change("write_file", at=old.last_updated)
        async with adapter.retaining(HistoryRetention(100, 30)) as storage:
            expected: str | None = None
            for n in range(3):  # each within the limits at its own time
                write = Write(KEY, f"v{n}".encode(), old, change=made)
                expected = await storage.put_if_version(write, expected)
                assert expected is not None
            assert expected is not None and len(await history(storage)) == 3

            assert await storage.delete_if_version(
                KEY, expected, change=change("delete_file")
            )

            assert [r.deleted for r in await history(storage)] == [True]

    async def test_one_write_prunes_up_to_four_records_per_limit(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A write removes up to four records beyond the count limit and up to
        four more past the age limit, never the newest (docs/history.md)."""
        old = replace(META, last_updated=NOW - timedelta(days=100))
        made = change("write_file", at=old.last_updated)
        async with adapter.retaining(HistoryRetention(6, 30)) as storage:
            versions: list[str] = []
            expected: str | None = None
            for n in range(6):  # six records, all within both limits as written
                write = Write(KEY, f"v{n}".encode(), old, change=made)
                expected = await storage.put_if_version(write, expected)
                assert expected is not None
                versions.append(expected)
            assert [r.version for r in await history(storage)] == versions[::-1]

            fresh = Write(KEY, b"now", META, change=change("write_file"))
            newest = await storage.put_if_version(fresh, expected)

            # Seven records: the oldest goes by count, the next four by age.
            assert newest is not None
            assert [r.version for r in await history(storage)] == [newest, versions[5]]

    async def test_a_lowered_count_limit_drops_the_oldest_records_first(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Reopened with a count limit far below its history, a file loses its
        four oldest records on the next write, none between newer ones
        (docs/history.md: oldest first)."""
        if adapter.kind == "memory":
            pytest.skip("retaining opens a new, empty memory storage")
        versions: list[str] = []
        expected: str | None = None
        async with adapter.retaining(HistoryRetention(100, 0)) as storage:
            for n in range(12):
                write = Write(KEY, f"v{n}".encode(), META, change=change("write_file"))
                expected = await storage.put_if_version(write, expected)
                assert expected is not None
                versions.append(expected)
        async with adapter.retaining(HistoryRetention(2, 0)) as storage:
            fresh = Write(KEY, b"now", META, change=change("write_file"))
            newest = await storage.put_if_version(fresh, expected)

            assert newest is not None
            kept = [r.version for r in await history(storage)]
            assert kept == [newest, *versions[::-1][:8]]

    async def test_scrub_erases_the_history_under_its_prefix_only(
        self, adapter: AdapterUnderTest
    ) -> None:
        """After a purge's scrub no record of the entity remains; others stay,
        the record of a delete too."""
        versions = await _lifecycle(adapter.storage)
        neighbour = "user/bob/notes/tea.md"
        kept = await adapter.storage.put_if_version(
            Write(neighbour, b"bob", META, change=change("write_file")), None
        )
        deleted = "user/bob/notes/gone.md"
        gone = await adapter.storage.put_if_version(
            Write(deleted, b"gone", META, change=change("write_file")), None
        )
        assert gone is not None
        assert await adapter.storage.delete_if_version(
            deleted, gone, change=change("delete_file")
        )

        await adapter.storage.scrub("user/alice/")

        assert await history(adapter.storage) == []
        assert await adapter.storage.get_version(KEY, versions[0]) is None
        assert [r.version for r in await history(adapter.storage, neighbour)] == [kept]
        left = await history(adapter.storage, deleted)
        assert [(r.deleted, r.version == gone) for r in left] == [
            (True, False),
            (False, True),
        ]

    async def test_an_unconditional_put_records_its_change(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
        later = Write(KEY, b"two\n", META, change("append_line", "http"))
        second = await storage.put(later)

        records = [(r.version, r.operation, r.actor) for r in await history(storage)]
        assert records == [
            (second, "append_line", "http"),
            (first, "write_file", "claude-desktop"),
        ]

    async def test_own_change_answers_only_the_calls_own_landed_change(
        self, adapter: AdapterUnderTest
    ) -> None:
        """GCS, whose records keep their call's key (a write there can end with
        its outcome unknown), answers the call's record with its data; every
        other adapter answers None; no adapter answers another call's."""
        storage = adapter.storage
        keyed = Change("write_file", "http", NOW, call="call-1")
        first = await storage.put_if_version(Write(KEY, b"one\n", META, keyed), None)
        assert first is not None
        later = Write(KEY, b"two\n", META, change("append_line"))
        assert await storage.put_if_version(later, first) is not None

        own = await storage.own_change(KEY, "call-1")

        if adapter.kind == "gcs":
            assert own is not None
            assert (own.version, own.data, own.call) == (first, b"one\n", "call-1")
        else:
            assert own is None
        assert await storage.own_change(KEY, "call-2") is None
        assert await storage.own_change(KEY, "") is None
        assert await storage.own_change("user/alice/notes/absent.md", "call-1") is None
