"""The audit buffer on its own, over a store's write that records each batch.

What it holds is counted exactly (queued events, drafts and the store's own
staged ones, after a failed write or a discard), since that count decides when
a write starts; its timer writes every time events wait; a timed write that
fails is logged and retried; a discard drops exactly one subject's events up
to a moment; the backlog of a store that is down is bounded, the oldest
dropped and logged; a close or a log's flush writes even when nothing is
queued (a store's events staged by another process).
"""

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from app.features.audit.ports import AuditEvent, Subject
from app.infra import audit_buffer
from app.infra.audit_buffer import AuditBuffer, BufferedLog
from tests.support.audit_events import event

ALICE = Subject("user", "alice")
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LONG = 3600.0
"""A timer that never runs within a test (``close`` cancels it)."""
SHORT = 0.01


class Store:
    """A store's write: the ids of each batch, failing the next ``failures``."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.failures = 0

    async def write(self, events: Sequence[AuditEvent]) -> None:
        self.batches.append([e.id for e in events])
        if self.failures:
            self.failures -= 1
            raise OSError("disk full")


@dataclass(frozen=True)
class Draft:
    """A read's events, built when the buffer is written."""

    built: list[AuditEvent]

    @property
    def size(self) -> int:
        return len(self.built)

    def events(self) -> list[AuditEvent]:
        return self.built


def ids(*events: AuditEvent) -> list[str]:
    return [e.id for e in events]


async def settle() -> None:
    """Let the loop run the tasks it holds (no clock involved)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def batches_reach(store: Store, count: int) -> None:
    """Wait for a timer's write (at most 5 s: a bound, not a measurement)."""
    async with asyncio.timeout(5):
        while len(store.batches) < count:
            await asyncio.sleep(SHORT)


async def test_the_timer_writes_waiting_events_every_time() -> None:
    store = Store()
    buffer = AuditBuffer(store.write, max_delay=SHORT)
    first, second = event(), event()

    await buffer.add([first], durable=False)
    await batches_reach(store, 1)
    await buffer.add([second], durable=False)
    await batches_reach(store, 2)

    assert store.batches == [ids(first), ids(second)]
    await buffer.close()


async def test_a_timed_write_that_fails_is_logged_and_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Store()
    store.failures = 1
    buffer = AuditBuffer(store.write, max_delay=SHORT)
    waiting = event()

    with caplog.at_level(logging.ERROR, "wenchang.audit"):
        await buffer.add([waiting], durable=False)
        await batches_reach(store, 2)

    assert store.batches == [ids(waiting), ids(waiting)]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "audit events could not be written; retrying")
    ]
    await buffer.close()


async def test_events_recorded_after_a_close_are_still_written_on_the_timer() -> None:
    """A late request's events, after the log closed, are not held for ever."""
    store = Store()
    buffer = AuditBuffer(store.write, max_delay=SHORT)
    early, late = event(), event()
    await buffer.add([early], durable=False)
    await buffer.close()

    await buffer.add([late], durable=False)
    await batches_reach(store, 2)

    assert store.batches == [ids(early), ids(late)]
    await buffer.close()


async def test_unencodable_text_is_written_as_replacement_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    written: list[list[str | None]] = []

    async def write(events: Sequence[AuditEvent]) -> None:
        for e in events:
            (e.name or "").encode()  # a lone surrogate raises, as a store's does
        written.append([e.name for e in events])

    buffer = AuditBuffer(write)
    with caplog.at_level(logging.WARNING, "wenchang.audit"):
        await buffer.add([event(name="tea\ud800"), event()], durable=True)

    assert written == [["tea\ufffd", "tea"]]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "audit events held text UTF-8 cannot encode: kept as U+FFFD")
    ]


async def test_a_failed_write_keeps_the_count_of_events_and_staged_ones() -> None:
    """After a failed write, a write starts exactly when the events put back, the
    store's staged one and the new ones reach ``max_events`` (4 here)."""
    store = Store()
    buffer = AuditBuffer(store.write, max_events=4, max_delay=LONG)
    a, b, c = event(), event(), event()
    buffer.poke()
    store.failures = 1
    with pytest.raises(OSError):
        await buffer.add([a], durable=True)

    await buffer.add([b], durable=False)
    await settle()
    assert store.batches == [ids(a)]  # 3 counted: a, the staged one, b

    await buffer.add([c], durable=False)
    await settle()
    assert store.batches == [ids(a), ids(a, b, c)]
    await buffer.close()


async def test_a_discard_drops_one_subjects_events_up_to_its_moment() -> None:
    """Exactly ALICE's events at or before T0 go, and no longer count."""
    store = Store()
    buffer = AuditBuffer(store.write, max_events=6, max_delay=LONG)
    minute = timedelta(minutes=1)
    before, at, after = event(at=T0 - minute), event(at=T0), event(at=T0 + minute)
    bob = event(Subject("user", "bob"), at=T0 - minute)
    team = event(Subject("team", "alice"), at=T0 - minute)
    await buffer.add([before, at, after, bob, team], durable=False)

    buffer.discard(ALICE, until=T0)
    more = [event(), event(), event()]
    await buffer.add(more[:2], durable=False)
    await settle()
    assert store.batches == []  # 5 counted
    await buffer.add(more[2:], durable=False)
    await settle()

    assert store.batches == [ids(after, bob, team, *more)]
    await buffer.close()


async def test_the_backlog_of_a_store_that_is_down_drops_its_oldest(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(audit_buffer, "MAX_BACKLOG", 3)
    store = Store()
    buffer = AuditBuffer(store.write, max_delay=LONG)
    a, b, c, d = event(), event(), event(), event()
    store.failures = 2

    with caplog.at_level(logging.ERROR, "wenchang.audit"):
        with pytest.raises(OSError):
            await buffer.add([a, b, c], durable=True)
        assert caplog.records == []  # exactly the bound: all kept
        with pytest.raises(OSError):
            await buffer.add([d], durable=True)
        await buffer.close()

    assert store.batches[-1] == ids(b, c, d)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "audit store unavailable: dropped the 1 oldest unwritten events")
    ]


async def test_a_close_writes_even_when_nothing_is_queued() -> None:
    """Another process may have staged events only the store's write moves."""
    store = Store()
    buffer = AuditBuffer(store.write)

    await buffer.close()

    assert store.batches == [[]]


async def test_a_buffered_log_flushes_even_when_idle_and_writes_its_drafts() -> None:
    store = Store()
    log = BufferedLog(store.write)
    await log.flush()
    drafted = event()

    log.record_later(Draft([drafted]))
    await log.flush()

    assert store.batches == [[], ids(drafted)]
    await log.close()
