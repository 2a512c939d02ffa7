"""The storage conformance suite: every Storage port rule, once for all adapters.

Subclass ``StorageConformance`` in a ``Test*`` class and supply one fixture,
``adapter``, yielding a fresh, empty ``AdapterUnderTest`` (see
``tests/support/storage_adapters.py``)::

    class TestMyStorage(StorageConformance):
        @pytest.fixture
        async def adapter(self, tmp_path): ...

Failures name the adapter through the test id and the case through the test name.
"""

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import format_timestamp
from app.features.memory.ports import Change, FileMetadata, Storage, Write
from app.shared.errors import backend_unavailable
from tests.support.storage_adapters import AdapterUnderTest
from tests.support.storage_change_conformance import StorageChangeFeedConformance
from tests.support.storage_erase_conformance import StorageEraseConformance
from tests.support.storage_history_conformance import StorageHistoryConformance
from tests.support.storage_rename_conformance import StorageRenameConformance

RACERS = 32
KEY = "user/alice/notes/tea.md"
META = FileMetadata(
    description="Über tea ☕ \"quoted\" and 'single'",
    aliases=("green", "绿茶", "green"),
    sources=("claude-desktop", "http"),
    last_updated=datetime(2026, 3, 1, 12, 30, 45, 123456, tzinfo=UTC),
)
OTHER_META = FileMetadata("other", (), ("mcp",), datetime(2026, 3, 2, tzinfo=UTC))
ORDERED_KEYS = [
    "a",
    "a-b",
    "a.md",
    "a/b",
    "a/b-c",
    "a/b/c",
    "a0",
    "A",
    "b",
    "z",
    "é",
    "日本/茶.md",
    "😀",
]


async def keys(storage: Storage, prefix: str = "") -> list[str]:
    listed = await storage.list_page(prefix, start_after=None, limit=10_000)
    return [item.key for item in listed]


class StorageConformance(
    StorageHistoryConformance,
    StorageChangeFeedConformance,
    StorageRenameConformance,
    StorageEraseConformance,
):
    """Every case of the Storage port contract; supply ``adapter``."""

    async def test_get_of_a_missing_key_is_none(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Nothing stored: get answers None, not an error."""
        assert await adapter.storage.get(KEY) is None

    async def test_put_round_trips_body_metadata_and_version(
        self, adapter: AdapterUnderTest
    ) -> None:
        """What put stores, get returns: bytes, every metadata field, the version."""
        body = "- [stated] Likes 绿茶 ☕\n".encode()

        version = await adapter.storage.put(Write(KEY, body, META))

        stored = await adapter.storage.get(KEY)
        assert stored is not None
        assert (stored.data, stored.metadata, stored.version) == (body, META, version)
        # A read shows this text as the file's last_updated, unformatted again.
        shown = format_timestamp(META.last_updated)
        assert stored.updated_text in (None, shown)

    async def test_expiry_round_trips_through_every_write_and_listing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """``expires_at`` is stored with the rest: get, list and a guarded
        replace keep what was written, and a write without it clears it."""
        expires = datetime(2027, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
        meta = replace(META, expires_at=expires)
        storage = adapter.storage

        first = await storage.put_if_version(Write(KEY, b"x", meta), None)
        assert first is not None
        stored = await storage.get(KEY)
        assert stored is not None and stored.metadata == meta
        listed = await storage.list_page("user/", start_after=None, limit=10)
        assert [item.metadata.expires_at for item in listed] == [expires]

        second = await storage.put_if_version(Write(KEY, b"y", META), first)
        assert second is not None
        stored = await storage.get(KEY)
        assert stored is not None and stored.metadata.expires_at is None
        await storage.put(Write(KEY, b"z", meta))
        stored = await storage.get(KEY)
        assert stored is not None and stored.metadata.expires_at == expires

    async def test_a_write_naming_its_version_keeps_it_where_storage_can(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A restore's ``Write.version`` is what get and history answer, except
        on GCS, whose generations are the backend's own."""
        change = Change("memory.import_markdown", "task", META.last_updated)
        write = Write(KEY, b"x", META, change=change, version="restored-1")

        version = await adapter.storage.put_if_version(write, None)

        assert version is not None
        stored = await adapter.storage.get(KEY)
        assert stored is not None and stored.version == version
        assert await adapter.storage.get_version(KEY, version) is not None
        assert (version == "restored-1") == (adapter.kind != "gcs")

    async def test_an_empty_body_round_trips(self, adapter: AdapterUnderTest) -> None:
        """An empty body is a body, not a missing object."""
        await adapter.storage.put(Write(KEY, b"", OTHER_META))

        stored = await adapter.storage.get(KEY)

        assert stored is not None and stored.data == b""

    async def test_every_write_mints_a_new_version(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Five writes of the same bytes give five distinct versions."""
        versions = [await adapter.storage.put(Write(KEY, b"x", META)) for _ in range(5)]

        assert len(set(versions)) == 5
        stored = await adapter.storage.get(KEY)
        assert stored is not None and stored.version == versions[-1]

    async def test_get_matches_the_exact_key_only(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Neither a longer key nor a shorter one answers for a key."""
        await adapter.storage.put(Write("a/b.md.bak", b"bak", META))
        await adapter.storage.put(Write("a/b", b"dir-like", META))

        assert await adapter.storage.get("a/b.md") is None
        found = await adapter.storage.get("a/b")
        assert found is not None and found.data == b"dir-like"

    async def test_create_only_creates_a_missing_key(
        self, adapter: AdapterUnderTest
    ) -> None:
        """expected=None on a missing key writes and returns the version."""
        version = await adapter.storage.put_if_version(Write(KEY, b"new", META), None)

        stored = await adapter.storage.get(KEY)
        assert version is not None and stored is not None
        assert (stored.data, stored.version) == (b"new", version)

    async def test_create_only_on_an_existing_key_changes_nothing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """expected=None on an existing key returns None; the object is unchanged."""
        version = await adapter.storage.put(Write(KEY, b"old", META))

        result = await adapter.storage.put_if_version(
            Write(KEY, b"new", OTHER_META), None
        )

        stored = await adapter.storage.get(KEY)
        assert result is None and stored is not None
        assert (stored.data, stored.metadata, stored.version) == (b"old", META, version)

    async def test_compare_and_swap_at_the_current_version_replaces_the_object(
        self, adapter: AdapterUnderTest
    ) -> None:
        """The current version admits the write; body and metadata change together."""
        old = await adapter.storage.put(Write(KEY, b"old", META))

        new = await adapter.storage.put_if_version(Write(KEY, b"new", OTHER_META), old)

        stored = await adapter.storage.get(KEY)
        assert new is not None and new != old and stored is not None
        assert (stored.data, stored.metadata, stored.version) == (
            b"new",
            OTHER_META,
            new,
        )

    async def test_compare_and_swap_at_a_stale_version_changes_nothing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """An earlier version returns None and leaves the object as it is."""
        stale = await adapter.storage.put(Write(KEY, b"one", META))
        current = await adapter.storage.put(Write(KEY, b"two", META))

        result = await adapter.storage.put_if_version(
            Write(KEY, b"three", OTHER_META), stale
        )

        stored = await adapter.storage.get(KEY)
        assert result is None and stored is not None
        assert (stored.data, stored.metadata, stored.version) == (b"two", META, current)

    async def test_compare_and_swap_on_a_missing_key_changes_nothing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A version from another key never creates this one."""
        foreign = await adapter.storage.put(
            Write("user/alice/notes/other.md", b"x", META)
        )

        result = await adapter.storage.put_if_version(Write(KEY, b"new", META), foreign)

        assert result is None
        assert await adapter.storage.get(KEY) is None

    @pytest.mark.parametrize(
        "bogus", ["", "abc", "0", "-1", "007", " 1", "4.2", "9" * 30, "é"]
    )
    async def test_malformed_versions_never_match(
        self, adapter: AdapterUnderTest, bogus: str
    ) -> None:
        """A version no write minted fails writes and deletes without changes."""
        version = await adapter.storage.put(Write(KEY, b"kept", META))

        written = await adapter.storage.put_if_version(Write(KEY, b"new", META), bogus)
        deleted = await adapter.storage.delete_if_version(KEY, bogus)

        stored = await adapter.storage.get(KEY)
        assert (written, deleted) == (None, False) and stored is not None
        assert (stored.data, stored.version) == (b"kept", version)

    async def test_the_current_version_with_a_newline_does_not_match(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Versions compare exactly; no trimming."""
        version = await adapter.storage.put(Write(KEY, b"kept", META))

        result = await adapter.storage.put_if_version(
            Write(KEY, b"new", META), version + "\n"
        )

        assert result is None

    async def test_delete_at_the_current_version_removes_the_object(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A delete at the current version returns True; get then answers None."""
        version = await adapter.storage.put(Write(KEY, b"x", META))

        assert await adapter.storage.delete_if_version(KEY, version) is True

        assert await adapter.storage.get(KEY) is None
        assert await keys(adapter.storage) == []

    async def test_delete_at_a_stale_version_keeps_the_object(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A stale delete returns False and the object survives unchanged."""
        stale = await adapter.storage.put(Write(KEY, b"one", META))
        current = await adapter.storage.put(Write(KEY, b"two", META))

        assert await adapter.storage.delete_if_version(KEY, stale) is False

        stored = await adapter.storage.get(KEY)
        assert stored is not None and (stored.data, stored.version) == (b"two", current)

    async def test_delete_of_a_missing_key_returns_false(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Deleting what is not there is a failed precondition, not an error."""
        foreign = await adapter.storage.put(
            Write("user/alice/notes/other.md", b"x", META)
        )

        assert await adapter.storage.delete_if_version(KEY, foreign) is False

    async def test_versions_differ_across_delete_and_recreate(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A re-created key never reuses a version, so an old one cannot match."""
        first = await adapter.storage.put(Write(KEY, b"same", META))
        assert await adapter.storage.delete_if_version(KEY, first)

        second = await adapter.storage.put_if_version(Write(KEY, b"same", META), None)

        assert second is not None and second != first
        assert (
            await adapter.storage.put_if_version(Write(KEY, b"x", META), first) is None
        )
        assert await adapter.storage.delete_if_version(KEY, first) is False

    async def test_deleting_one_key_leaves_its_neighbours(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Only the deleted key goes; siblings and deeper keys stay listed."""
        for key in ("a/b", "a/b/c", "a/c"):
            await adapter.storage.put(Write(key, b"x", META))
        version = await adapter.storage.put(Write("a/b/d", b"x", META))

        await adapter.storage.delete_if_version("a/b/d", version)

        assert await keys(adapter.storage) == ["a/b", "a/b/c", "a/c"]

    async def test_listing_is_ascending_by_code_point(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Keys list in code-point order (GCS's): ``a-b`` before ``a/…``."""
        for key in reversed(ORDERED_KEYS):
            await adapter.storage.put(Write(key, key.encode(), META))

        assert await keys(adapter.storage) == sorted(ORDERED_KEYS)

    async def test_listing_matches_a_plain_string_prefix(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A prefix need not end at a segment boundary."""
        for key in ("a/e/x", "a/e/xy/1.md", "a/e/y", "a/ex", "b/e/x"):
            await adapter.storage.put(Write(key, b"x", META))

        assert await keys(adapter.storage, "a/e/x") == ["a/e/x", "a/e/xy/1.md"]
        assert await keys(adapter.storage, "a/e") == [
            "a/e/x",
            "a/e/xy/1.md",
            "a/e/y",
            "a/ex",
        ]
        assert await keys(adapter.storage, "c") == []

    async def test_listing_starts_strictly_after_start_after(
        self, adapter: AdapterUnderTest
    ) -> None:
        """start_after is exclusive and need not be a stored key."""
        for key in ORDERED_KEYS:
            await adapter.storage.put(Write(key, b"x", META))
        expected = sorted(ORDERED_KEYS)

        after_stored = await adapter.storage.list_page("", start_after="a/b", limit=100)
        after_absent = await adapter.storage.list_page(
            "", start_after="a/b+", limit=100
        )

        assert [item.key for item in after_stored] == expected[
            expected.index("a/b") + 1 :
        ]
        assert [item.key for item in after_absent] == expected[
            expected.index("a/b-c") :
        ]

    async def test_listing_stops_at_the_limit_and_pages_cover_every_key_once(
        self, adapter: AdapterUnderTest
    ) -> None:
        """Pages of two, each starting after the last, list every key exactly once."""
        for key in ORDERED_KEYS:
            await adapter.storage.put(Write(f"p/{key}", b"x", META))
        await adapter.storage.put(Write("q/outside", b"x", META))
        seen: list[str] = []
        start: str | None = None

        while page := await adapter.storage.list_page("p/", start_after=start, limit=2):
            assert len(page) <= 2
            seen.extend(item.key for item in page)
            start = page[-1].key

        assert seen == sorted(f"p/{key}" for key in ORDERED_KEYS)

    async def test_listing_reports_metadata_and_version_as_get_does(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A listed entry carries the latest version and metadata, never the body."""
        await adapter.storage.put(Write(KEY, b"first", OTHER_META))
        version = await adapter.storage.put(Write(KEY, b"second", META))

        (listed,) = await adapter.storage.list_page("user/", start_after=None, limit=5)

        assert (listed.key, listed.metadata, listed.version) == (KEY, META, version)
        assert listed.updated_text == format_timestamp(META.last_updated)
        assert not hasattr(listed, "data")

    async def test_count_counts_the_keys_with_a_prefix(
        self, adapter: AdapterUnderTest
    ) -> None:
        """count(prefix) agrees with the listing of the same prefix."""
        for key in ORDERED_KEYS:
            await adapter.storage.put(Write(key, b"x", META))

        assert await adapter.storage.count("") == len(ORDERED_KEYS)
        assert await adapter.storage.count("a") == 7
        assert await adapter.storage.count("a/") == 3
        assert await adapter.storage.count("none/") == 0

    @pytest.mark.parametrize(
        "name",
        [
            "茶",
            "Tea",
            "tea",
            "café au lait",
            "100% sure",
            "émoji 😀",
            ".hidden",
            "~x",
            "n" * 256,
        ],
    )
    async def test_unicode_and_unusual_names_round_trip(
        self, adapter: AdapterUnderTest, name: str
    ) -> None:
        """Any name the API accepts is a key: stored, read back and listed as given."""
        key = f"user/alice/notes/{name}.md"

        version = await adapter.storage.put_if_version(
            Write(key, name.encode(), META), None
        )

        stored = await adapter.storage.get(key)
        assert stored is not None and (stored.data, stored.version) == (
            name.encode(),
            version,
        )
        assert await keys(adapter.storage, "user/alice/") == [key]

    async def test_names_differing_only_in_case_are_distinct(
        self, adapter: AdapterUnderTest
    ) -> None:
        """``Tea`` and ``tea`` are two files, also on case-insensitive disks."""
        await adapter.storage.put(Write("user/alice/notes/Tea.md", b"upper", META))
        await adapter.storage.put(Write("user/alice/notes/tea.md", b"lower", META))

        upper = await adapter.storage.get("user/alice/notes/Tea.md")

        assert upper is not None and upper.data == b"upper"
        assert await adapter.storage.count("user/alice/notes/") == 2

    async def test_racing_creates_have_exactly_one_winner(
        self, adapter: AdapterUnderTest
    ) -> None:
        """32 create-only writes (two clients) race; one lands, its body is stored."""
        async with adapter.sibling() as other:
            results = await _race(
                [
                    (adapter.storage if n % 2 else other).put_if_version(
                        Write(KEY, f"racer {n}".encode(), META), None
                    )
                    for n in range(RACERS)
                ]
            )

        winners = [(n, v) for n, v in enumerate(results) if v is not None]
        stored = await adapter.storage.get(KEY)
        assert len(winners) == 1 and stored is not None
        assert (stored.data, stored.version) == (
            f"racer {winners[0][0]}".encode(),
            winners[0][1],
        )

    async def test_racing_compare_and_swaps_have_exactly_one_winner(
        self, adapter: AdapterUnderTest
    ) -> None:
        """32 writes at the same version race; exactly one lands."""
        base = await adapter.storage.put(Write(KEY, b"base", META))
        async with adapter.sibling() as other:
            results = await _race(
                [
                    (adapter.storage if n % 2 else other).put_if_version(
                        Write(KEY, f"racer {n}".encode(), META), base
                    )
                    for n in range(RACERS)
                ]
            )

        winners = [(n, v) for n, v in enumerate(results) if v is not None]
        stored = await adapter.storage.get(KEY)
        assert len(winners) == 1 and stored is not None
        assert (stored.data, stored.version) == (
            f"racer {winners[0][0]}".encode(),
            winners[0][1],
        )

    async def test_racing_deletes_have_exactly_one_winner(
        self, adapter: AdapterUnderTest
    ) -> None:
        """32 deletes at the same version race; exactly one reports the delete."""
        version = await adapter.storage.put(Write(KEY, b"doomed", META))
        async with adapter.sibling() as other:
            results = await _race(
                [
                    (adapter.storage if n % 2 else other).delete_if_version(
                        KEY, version
                    )
                    for n in range(RACERS)
                ]
            )

        assert results.count(True) == 1
        assert await adapter.storage.get(KEY) is None

    async def test_ping_answers_while_the_backend_is_up(
        self, adapter: AdapterUnderTest
    ) -> None:
        """ping returns quietly on a healthy backend."""
        await adapter.storage.ping()

    async def test_an_outage_is_backend_unavailable_and_writes_nothing(
        self, adapter: AdapterUnderTest
    ) -> None:
        """A write during an outage is BackendUnavailable and changes nothing."""
        if adapter.outage is None:
            pytest.skip(f"{adapter.kind} storage has no backend that can go down")
        version = await adapter.storage.put(Write(KEY, b"before", META))

        with adapter.outage(), pytest.raises(AppError) as raised:
            await adapter.storage.put_if_version(
                Write(KEY, b"during", OTHER_META), version
            )

        assert raised.value.definition is backend_unavailable
        assert raised.value.details["reason"] == adapter.outage_reason
        assert raised.value.headers == {"Retry-After": "1"}
        stored = await adapter.storage.get(KEY)
        assert stored is not None
        assert (stored.data, stored.metadata, stored.version) == (
            b"before",
            META,
            version,
        )
        assert await adapter.storage.put_if_version(Write(KEY, b"after", META), version)


async def _race[T](calls: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Start every call at once and wait for all of them."""
    return list(await asyncio.gather(*calls))
