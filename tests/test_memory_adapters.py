"""The in-process adapters (``app/infra/memory/``) at the edges their own
clocks and counters decide: restored version numbers, files without history,
the change feed's age bound, rate windows and request records on an injected
clock, and the index cache's markers, expiry and corpus bound."""

from datetime import UTC, datetime, timedelta

import pytest
from tenchi.idempotency import IdempotencyInProgress, IdempotencyReservation

from app.features.audit.ports import AuditSelection, Subject
from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.features.search.domain.corpus import Corpus
from app.infra.change_markers import ProcessChangeMarkers
from app.infra.memory.audit_log import MemoryAuditLog
from app.infra.memory.idempotency_store import MemoryIdempotencyStore
from app.infra.memory.index_cache import MAX_CORPORA, MemoryIndexCache, NoIndexCache
from app.infra.memory.process_rate_limit_store import ProcessRateLimitStore
from app.infra.memory.storage import MemoryStorage
from app.infra.request_guards import Consumption
from app.infra.sqlite.guard_store import SWEEP_INTERVAL_SECONDS
from tests.support.audit_events import Drafted
from tests.support.audited_app import staged_write

T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)
META = FileMetadata("tea", (), ("http",), T0)
TEA, MINT = "user/alice/notes/tea.md", "user/alice/notes/mint.md"


def change(at: datetime = T0) -> Change:
    return Change("write_file", "claude", at)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_a_restored_version_number_is_never_given_again() -> None:
    storage = MemoryStorage()
    restored = await storage.put(Write(TEA, b"a", META, change(), version="3"))
    later = [await storage.put(Write(TEA, b"b", META, change())) for _ in range(3)]
    assert restored == "3"
    assert len({restored, *later}) == 4


async def test_deletes_and_renames_are_each_a_version_of_their_own() -> None:
    storage = MemoryStorage()
    versions: list[str] = []
    for _ in range(2):
        created = await storage.put(Write(TEA, b"a", META, change()))
        assert await storage.delete_if_version(TEA, created, change=change())
    for record in await storage.list_versions(TEA, after=None, limit=10):
        versions.append(record.version)
    assert len(set(versions)) == 4

    moved: list[str | None] = []
    for source, destination in ((MINT, TEA), (TEA, MINT)):
        current = await storage.put(Write(source, b"x", META, change()))
        moved.append(
            await storage.rename_if_version(
                source, destination, current, replacing=None, change=change()
            )
        )
        await storage.erase_if_version(destination, moved[-1] or "")
    assert None not in moved and moved[0] != moved[1]


async def test_files_written_without_history_are_renamed_and_erased() -> None:
    storage = MemoryStorage()
    written = await storage.put(Write(TEA, b"green", META))
    moved = await storage.rename_if_version(
        TEA, MINT, written, replacing=None, change=change()
    )
    assert moved is not None
    record = await storage.get_version(MINT, moved)
    assert record is not None and (record.data, record.metadata) == (b"green", META)
    assert await storage.erase_if_version(MINT, moved)

    plain = await storage.put(Write(TEA, b"x", META))
    assert await storage.erase_if_version(TEA, plain)
    assert await storage.get(TEA) is None


async def test_the_versions_after_an_unknown_one_are_none() -> None:
    storage = MemoryStorage()
    await storage.put(Write(TEA, b"a", META, change()))
    assert await storage.list_versions(TEA, after="999", limit=10) == []


async def test_a_listing_of_one_entity_skips_the_keys_before_it() -> None:
    storage = MemoryStorage()
    for key in ("user/alice/notes/a.md", "user/bob/notes/b.md"):
        await storage.put(Write(key, b"x", META))
    page = await storage.list_page("user/bob/", start_after=None, limit=10)
    assert [entry.key for entry in page] == ["user/bob/notes/b.md"]


async def test_a_change_exactly_as_old_as_the_retention_is_served() -> None:
    retention = HistoryRetention(changes_seconds=60)
    storage = MemoryStorage(retention=retention)
    await storage.put(Write(TEA, b"a", META, change()))
    edge = T0 + timedelta(seconds=60)
    page = await storage.changes_after("user/alice/", 0, now=edge, limit=10)
    assert [entry.key for entry in page.changes] == [TEA]
    later = edge + timedelta(microseconds=1)
    assert (
        await storage.changes_after("user/alice/", 0, now=later, limit=10)
    ).changes == []


@pytest.mark.parametrize(
    ("window", "cost"),
    [(0.0, 1), (-1.0, 1), (float("inf"), 1), (float("nan"), 1), (1.0, 0), (1.0, 3)],
)
async def test_a_window_or_cost_out_of_range_is_a_programming_error(
    window: float, cost: int
) -> None:
    store = ProcessRateLimitStore(clock=Clock(0.0))
    with pytest.raises(
        ValueError,
        match=r"^window_seconds must be finite and positive, cost in 1\.\.limit$",
    ):
        await store.spend(Consumption("ns", "tok", 2, window, cost))


async def test_a_window_admits_its_limit_then_refuses_until_it_ends() -> None:
    clock = Clock(0.0)
    store = ProcessRateLimitStore(clock=clock)
    await store.spend(Consumption("ns", "other", 1, 20.0, 1))  # next sweep at 20
    first = await store.spend(Consumption("ns", "tok", 2, 0.5, 2))
    assert (first.admitted, first.remaining) == (True, 0)
    refused = await store.spend(Consumption("ns", "tok", 2, 0.5, 1))
    assert (refused.admitted, refused.remaining, refused.reset_after_seconds) == (
        False,
        0,
        0.5,
    )
    clock.now = 0.5  # the window's end: a new window, no sweep in between
    again = await store.spend(Consumption("ns", "tok", 2, 0.5, 1))
    assert (again.admitted, again.remaining) == (True, 1)


def reservation(key: str, token: str = "t1") -> IdempotencyReservation:
    return IdempotencyReservation(
        namespace="ns",
        scope="user/alice/",
        key=key,
        fingerprint="f",
        token=token,
        completed_ttl=None,
    )


async def test_a_held_key_answers_the_holder_s_lease_left() -> None:
    clock = Clock(1000.0)
    store = MemoryIdempotencyStore(clock=clock)
    await store.claim(reservation("k"), 10.0)
    clock.now = 1003.0
    answer = await store.claim(reservation("k", token="t2"), 10.0)
    assert isinstance(answer, IdempotencyInProgress)
    assert answer.retry_after_seconds == 7


async def test_expired_records_are_swept_once_a_minute() -> None:
    """Expired records still count in an erasure until the next sweep, which
    comes a whole minute after the last one (the store's opening)."""
    clock = Clock(1000.0)
    store = MemoryIdempotencyStore(clock=clock)
    await store.claim(reservation("old"), 1.0)
    clock.now = 1000.0 + SWEEP_INTERVAL_SECONDS - 1
    await store.claim(reservation("a"), 1000.0)
    assert await store.erase_files("user/alice/", ["f"]) == 2
    await store.claim(reservation("old"), 1.0)
    clock.now = 1000.0 + SWEEP_INTERVAL_SECONDS
    await store.claim(reservation("b"), 1000.0)
    assert await store.erase_scope("user/alice/") == 1
    clock.now += SWEEP_INTERVAL_SECONDS
    await store.claim(reservation("c"), 1000.0)
    assert await store.erase_scope("user/alice/") == 1


async def test_a_listing_is_served_until_its_ttl_or_another_cache_s_invalidation() -> (
    None
):
    clock, markers = Clock(0.0), ProcessChangeMarkers()
    cache = MemoryIndexCache(ttl=10.0, markers=markers, clock=clock)
    other = MemoryIndexCache(ttl=10.0, markers=markers, clock=clock)
    listed = (await cache.get("p/")).stamp
    await cache.set("p/", [], stamp=listed)
    stamp = (await cache.get_corpus("p/")).stamp
    await cache.set_corpus("p/", Corpus(()), stamp=stamp)
    hit = await cache.get("p/")
    assert (hit.listing, hit.stamp) == ((), listed)
    assert (await cache.get_corpus("p/")).corpus is not None
    clock.now = 10.0
    assert (await cache.get("p/")).listing is None
    assert (await cache.get_corpus("p/")).corpus is None
    clock.now = 0.0
    await other.invalidate("p/")
    assert (await cache.get("p/")).listing is None
    assert (await cache.get_corpus("p/")).corpus is None


async def test_the_newest_corpora_are_kept() -> None:
    cache = MemoryIndexCache(ttl=60.0, clock=Clock(0.0))
    for n in range(MAX_CORPORA + 1):
        stamp = (await cache.get_corpus(f"p{n}/")).stamp
        await cache.set_corpus(f"p{n}/", Corpus(()), stamp=stamp)
    assert (await cache.get_corpus("p0/")).corpus is None
    assert (await cache.get_corpus("p1/")).corpus is not None
    assert (await cache.get_corpus(f"p{MAX_CORPORA}/")).corpus is not None


@pytest.mark.parametrize("after_write", [False, True])
async def test_an_invalidation_moves_a_process_marker(after_write: bool) -> None:
    """Writes do not move a process's markers, so every invalidation does."""
    for cache in (MemoryIndexCache(ttl=60.0), NoIndexCache()):
        before = (await cache.get("p/")).stamp
        if after_write:
            await cache.invalidate("p/", after_write=True)
        else:
            await cache.invalidate("p/")
        assert (await cache.get("p/")).stamp != before
        after = (await cache.get("p/")).stamp
        assert (await cache.get_corpus("p/")).stamp == after


async def test_the_memory_audit_log_keeps_a_drafts_events() -> None:
    log = MemoryAuditLog()
    drafted = staged_write("tea")

    log.record_later(Drafted([drafted]))

    selection = AuditSelection(subjects=(Subject("user", "alice"),))
    page = await log.query(selection, before=None, limit=10)
    assert [event.id for event in page.events] == [drafted.id]
