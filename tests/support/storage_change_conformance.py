"""Change-log behaviours of the Storage port (``ChangeFeed``), once for all adapters.

Mixed into ``StorageConformance``: each recorded mutation that lands appends one
entry to its entity's log, numbered consecutively in commit order (an empty
log from the clock, so a log begun after a scrub reuses no number), also
under racing writers and across clients of the same data; unrecorded or
losing writes append none; retention prunes old entries but never the newest;
a scrub erases the log, and the entity's next log starts past a gap.
"""

import asyncio
from datetime import timedelta

import pytest

from app.features.memory.ports import (
    ChangeFeed,
    ChangeLogPage,
    HistoryRetention,
    Storage,
    Write,
)
from tests.support.storage_adapters import AdapterUnderTest
from tests.support.storage_history_conformance import KEY, META, NOW, change

ENTITY = "user/alice/"
LATER = NOW + timedelta(minutes=1)


def feed_of(storage: Storage) -> ChangeFeed:
    if not isinstance(storage, ChangeFeed):
        pytest.skip(f"{type(storage).__name__} keeps no change log yet")
    return storage


async def log(storage: Storage, prefix: str = ENTITY, after: int = 0) -> ChangeLogPage:
    return await feed_of(storage).changes_after(prefix, after, now=LATER, limit=1000)


class StorageChangeFeedConformance:
    """Change-log cases of the Storage port contract; supply ``adapter``."""

    async def test_each_recorded_mutation_appends_one_entry_in_order(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        feed_of(storage)
        first = await storage.put_if_version(
            Write(KEY, b"one\n", META, change=change("write_file")), None
        )
        assert first is not None
        assert await storage.put_if_version(Write(KEY, b"x", META), None) is None
        await storage.put(Write("user/alice/notes/seeded.md", b"s", META))
        second = await storage.put_if_version(
            Write(KEY, b"two\n", META, change=change("append_line", "http")), first
        )
        assert second is not None
        assert await storage.delete_if_version(
            KEY, second, change=change("delete_file", "mcp")
        )
        page = await log(storage)
        tomb = (await storage.list_versions(KEY, after=None, limit=1))[0]
        base = page.changes[0].seq - 1
        numbered = [
            (e.seq - base, e.key, e.operation, e.actor, e.at) for e in page.changes
        ]
        assert numbered == [
            (1, KEY, "write_file", "claude-desktop", NOW),
            (2, KEY, "append_line", "http", NOW),
            (3, KEY, "delete_file", "mcp", NOW),
        ]
        assert [e.version for e in page.changes] == [first, second, tomb.version]
        assert page.last == base + 3
        assert (await log(storage, after=base + 2)).changes == page.changes[2:]

    async def test_racing_writers_number_their_entries_without_gaps(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Writes of one entity through two clients: 1..n, each once."""
        feed_of(adapter.storage)
        async with adapter.sibling() as other:

            async def write(storage: Storage, index: int) -> str | None:
                key = f"user/alice/notes/n{index}.md"
                return await storage.put_if_version(
                    Write(key, b"x", META, change=change("write_file")), None
                )

            writes = [write(adapter.storage if i % 2 else other, i) for i in range(16)]
            versions = await asyncio.gather(*writes)
            seen = await log(other)
        page = await log(adapter.storage)
        base = page.changes[0].seq - 1
        assert [e.seq for e in page.changes] == list(range(base + 1, base + 17))
        assert sorted(e.version for e in page.changes) == sorted(
            v for v in versions if v is not None
        )
        assert seen.changes == page.changes

    async def test_each_entity_has_a_log_of_its_own(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        feed_of(storage)
        for key in (KEY, "user/bob/notes/tea.md", "team/alice/notes/tea.md"):
            await storage.put(Write(key, b"x", META, change=change("write_file")))
        for prefix, key in (
            (ENTITY, KEY),
            ("user/bob/", "user/bob/notes/tea.md"),
            ("team/alice/", "team/alice/notes/tea.md"),
        ):
            page = await log(storage, prefix)
            assert [e.key for e in page.changes] == [key]
            assert page.last == page.changes[0].seq
        assert (await log(storage, "user/carol/")) == ChangeLogPage([], 0)

    async def test_a_page_holds_at_most_limit_entries_oldest_first(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        feed = feed_of(storage)
        for index in range(3):
            write = Write(KEY, bytes([index]), META, change=change("write_file"))
            await storage.put(write)
        seqs = [e.seq for e in (await log(storage)).changes]

        first = await feed.changes_after(ENTITY, 0, now=LATER, limit=2)
        rest = await feed.changes_after(ENTITY, seqs[1], now=LATER, limit=2)

        assert [e.seq for e in first.changes] == seqs[:2]
        assert [e.seq for e in rest.changes] == seqs[2:]

    async def test_retention_prunes_old_entries_but_never_the_newest(
        self, adapter: AdapterUnderTest
    ) -> None:
        feed_of(adapter.storage)
        retention = HistoryRetention(changes_seconds=86_400)
        async with adapter.retaining(retention) as storage:
            old = NOW - timedelta(days=3)
            for index in range(3):
                write = Write(KEY, bytes([index]), META, change("write_file", at=old))
                await storage.put(write)
            aged = await feed_of(storage).changes_after(ENTITY, 0, now=NOW, limit=9)
            assert aged.changes == [] and aged.last > 0  # kept, past the retention
            await storage.put(Write(KEY, b"new", META, change=change("write_file")))
            page = await feed_of(storage).changes_after(ENTITY, 0, now=NOW, limit=9)
            assert [e.seq for e in page.changes] == [aged.last + 1]
            assert page.last == aged.last + 1

    async def test_an_entry_exactly_at_the_retention_edge_is_kept(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Within the retention means at or after its edge: an entry exactly one
        retention older than a later write is neither pruned by that write nor
        hidden from a page read at that write's moment; a second later it is."""
        feed_of(adapter.storage)
        retention = HistoryRetention(changes_seconds=86_400)
        async with adapter.retaining(retention) as storage:
            edge = NOW - timedelta(days=1)
            await storage.put(Write(KEY, b"old", META, change("write_file", at=edge)))
            await storage.put(Write(KEY, b"new", META, change=change("write_file")))
            feed = feed_of(storage)
            page = await feed.changes_after(ENTITY, 0, now=NOW, limit=9)
            assert [e.at for e in page.changes] == [edge, NOW]
            past = NOW + timedelta(seconds=1)
            page = await feed.changes_after(ENTITY, 0, now=past, limit=9)
            assert [e.at for e in page.changes] == [NOW]

    async def test_a_page_after_every_number_names_the_newest(
        self, adapter: AdapterUnderTest
    ) -> None:
        """The "newest" cursor asks after a number past every one: no changes,
        and ``last`` the log's newest (0 for an empty log), so only what lands
        later follows it."""
        storage = adapter.storage
        feed = feed_of(storage)
        beyond = 1 << 62
        empty = await feed.changes_after(ENTITY, beyond, now=LATER, limit=1)
        assert empty == ChangeLogPage([], 0)
        for index in range(2):
            write = Write(KEY, bytes([index]), META, change=change("write_file"))
            await storage.put(write)
        newest = (await log(storage)).last
        page = await feed.changes_after(ENTITY, beyond, now=LATER, limit=1)
        assert page.changes == [] and page.last == newest > 0

    async def test_scrub_erases_the_log_of_the_prefix(
        self, adapter: AdapterUnderTest
    ) -> None:
        storage = adapter.storage
        feed_of(storage)
        await storage.put(Write(KEY, b"x", META, change=change("write_file")))
        await storage.put(Write("user/bob/n.md", b"x", META, change=change("w")))
        before = await log(storage)
        await storage.scrub(ENTITY)
        assert await log(storage) == ChangeLogPage([], 0)
        assert len((await log(storage, "user/bob/")).changes) == 1
        # The next log leaves a gap after every number the scrubbed one issued,
        # so a cursor held from before never reads on as if nothing was erased.
        await storage.put(Write(KEY, b"y", META, change=change("write_file")))
        assert (await log(storage)).changes[0].seq > before.last + 1

    async def test_an_erase_never_lets_a_number_be_issued_again(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A sweep erasing the key that holds the log's newest entries: the next
        write numbers on past them, so a cursor that read them meets no number
        twice."""
        storage = adapter.storage
        feed_of(storage)
        kept, new = "user/alice/notes/kept.md", "user/alice/notes/new.md"
        await storage.put(Write(kept, b"k", META, change=change("write_file")))
        first = await storage.put(Write(KEY, b"one", META, change=change("w")))
        second = await storage.put_if_version(
            Write(KEY, b"two", META, change=change("append_line")), first
        )
        assert second is not None
        before = await log(storage)
        assert await storage.erase_if_version(KEY, second)
        assert (await log(storage)).last == before.last
        await storage.put(Write(new, b"n", META, change=change("write_file")))
        page = await log(storage, after=before.last)
        assert [(e.seq, e.key) for e in page.changes] == [(before.last + 1, new)]
        # Its newest entry alone, the one before it landed.
        brief = await storage.put(Write(KEY, b"b", META, change=change("w")))
        held = (await log(storage)).last
        assert await storage.erase_if_version(KEY, brief)
        await storage.put(Write(kept, b"k2", META, change=change("write_file")))
        page = await log(storage, after=held)
        assert [(e.seq, e.key) for e in page.changes] == [(held + 1, kept)]
