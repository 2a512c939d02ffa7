"""The audit log adapters on real files: SQLite, JSON lines, memory, stream, none.

Every queryable adapter keeps events, answers newest first with a stable
cursor, filters by subject, time and operation, erases one entity (also events
that reach the store after the erasure from another process's buffer) and
forgets what is older than its retention.
"""

import asyncio
import io
import json
import sqlite3
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import (
    AuditEvent,
    AuditLog,
    AuditSelection,
    Position,
    Subject,
)
from app.infra.audit_buffer import AuditBuffer
from app.infra.port_wiring import open_audit_log
from app.shared.errors import audit_unavailable
from tests.support.audit_events import event

QUERYABLE = ("memory", "sqlite", "file")
ALICE = Subject("user", "alice")
BOB = Subject("user", "bob")
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

type Opener = Callable[..., AbstractAsyncContextManager[AuditLog]]


def audit_url(kind: str, root: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{root / 'wenchang.db'}"
    if kind == "file":
        return f"file://{root / 'audit'}"
    return kind


def recent(minutes: int) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=minutes)


@pytest.fixture(params=QUERYABLE)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    url = audit_url(request.param, tmp_path)
    shared: dict[str, AuditLog] = {}

    def open_log(max_days: int = 365) -> AbstractAsyncContextManager[AuditLog]:
        if request.param == "memory":
            return _shared_memory(shared, max_days)
        return open_audit_log(url, max_days=max_days, stream=io.StringIO)

    return open_log


def _shared_memory(
    shared: dict[str, AuditLog], max_days: int
) -> AbstractAsyncContextManager[AuditLog]:
    # A second "process" on the memory adapter is the same object.
    @asynccontextmanager
    async def opened() -> AsyncGenerator[AuditLog]:
        if "log" not in shared:
            async with open_audit_log(
                "memory", max_days=max_days, stream=io.StringIO
            ) as log:
                shared["log"] = log
        yield shared["log"]

    return opened()


async def every_event(log: AuditLog, selection: AuditSelection) -> list[AuditEvent]:
    found: list[AuditEvent] = []
    before: Position | None = None
    while True:
        page = await log.query(selection, before=before, limit=2)
        found += page.events
        if page.next_position is None:
            return found
        before = page.next_position


async def test_events_come_back_newest_first_across_pages(opener: Opener) -> None:
    """Pages of two walk every event once, newest first."""
    written = [event(at=recent(10 - i)) for i in range(5)]
    async with opener() as log:
        await log.record(written[:3], durable=False)
        await log.record(written[3:], durable=True)

        found = await every_event(log, AuditSelection(subjects=(ALICE,)))

    assert [e.id for e in found] == [e.id for e in reversed(written)]
    assert found[0] == written[-1]


async def test_a_query_sees_only_its_subjects(opener: Opener) -> None:
    """Bob's events never appear in a selection of Alice."""
    async with opener() as log:
        await log.record(
            [event(ALICE, at=recent(2)), event(BOB, at=recent(1))], durable=True
        )

        alice = await every_event(log, AuditSelection(subjects=(ALICE,)))
        both = await every_event(log, AuditSelection(subjects=(ALICE, BOB)))
        none = await every_event(log, AuditSelection(subjects=()))

    assert {e.entity_id for e in alice} == {"alice"}
    assert {e.entity_id for e in both} == {"alice", "bob"}
    assert none == []


async def test_since_until_and_operation_filter_inclusively(opener: Opener) -> None:
    """since and until are inclusive bounds; operation matches exactly."""
    times = [recent(30), recent(20), recent(10)]
    async with opener() as log:
        await log.record([event(at=t) for t in times], durable=True)
        await log.record([event(at=recent(5), operation="write_file")], durable=True)

        window = await every_event(
            log, AuditSelection(subjects=(ALICE,), since=times[0], until=times[1])
        )
        writes = await every_event(
            log, AuditSelection(subjects=(ALICE,), operation="write_file")
        )

    assert [e.at for e in window] == [times[1], times[0]]
    assert [e.operation for e in writes] == ["write_file"]


async def test_area_and_name_select_one_files_trail(opener: Opener) -> None:
    """area and name narrow the events to those naming one file."""
    async with opener() as log:
        await log.record([event(at=recent(3), name="tea")], durable=True)
        await log.record([event(at=recent(2), name="coffee")], durable=True)

        trail = await every_event(
            log, AuditSelection(subjects=(ALICE,), area="notes", name="coffee")
        )
        elsewhere = await every_event(
            log, AuditSelection(subjects=(ALICE,), area="travel")
        )

    assert [e.name for e in trail] == ["coffee"]
    assert elsewhere == []


async def test_buffered_events_are_written_on_close(opener: Opener) -> None:
    """A buffered read event survives an orderly shutdown."""
    read = event(at=recent(1))
    async with opener() as log:
        await log.record([read], durable=False)

    async with opener() as reopened:
        found = await every_event(reopened, AuditSelection(subjects=(ALICE,)))

    assert [e.id for e in found] == [read.id]


async def test_erase_removes_the_entity_and_keeps_others(opener: Opener) -> None:
    """After an erasure nothing of Alice's is left; Bob's events stay."""
    async with opener() as log:
        await log.record(
            [event(ALICE, at=recent(3), files=("notes/tea",))], durable=True
        )
        await log.record([event(BOB, at=recent(3))], durable=True)
        await log.record([event(ALICE, at=recent(2))], durable=False)

        await log.erase(ALICE, at=recent(1))

        alice = await every_event(log, AuditSelection(subjects=(ALICE,)))
        bob = await every_event(log, AuditSelection(subjects=(BOB,)))
    assert alice == []
    assert len(bob) == 1


async def test_an_event_from_before_an_erasure_is_dropped_when_it_arrives(
    opener: Opener,
) -> None:
    """Another process's buffered read of an erased entity never lands after it."""
    late = event(ALICE, at=recent(3), files=("notes/tea",))
    after = event(ALICE, at=recent(0), operation="memory.purge", name=None)
    async with opener() as process_a, opener() as process_b:
        await process_b.record([late], durable=False)
        await process_a.erase(ALICE, at=recent(1))
        await process_a.record([after], durable=True)

        await process_b.flush()
        found = await every_event(process_a, AuditSelection(subjects=(ALICE,)))

    assert [e.id for e in found] == [after.id]


@pytest.mark.parametrize("kind", ["sqlite", "file"])
async def test_events_older_than_the_retention_are_not_returned(
    kind: str, tmp_path: Path
) -> None:
    """An event past WENCHANG_AUDIT_MAX_DAYS is gone; a fresh one stays."""
    url = audit_url(kind, tmp_path)
    old = event(at=datetime.now(UTC) - timedelta(days=3))
    fresh = event(at=recent(1))
    async with open_audit_log(url, max_days=2, stream=io.StringIO) as log:
        await log.record([old, fresh], durable=True)

        found = await every_event(log, AuditSelection(subjects=(ALICE,)))

    assert [e.id for e in found] == [fresh.id]


async def test_sqlite_retention_deletes_old_rows(tmp_path: Path) -> None:
    """Expired events are deleted from the database, not only hidden."""
    url = audit_url("sqlite", tmp_path)
    old = event(at=datetime.now(UTC) - timedelta(days=3))
    async with open_audit_log(url, max_days=2, stream=io.StringIO) as log:
        await log.record([old], durable=True)

    with sqlite3.connect(tmp_path / "wenchang.db") as database:
        rows = database.execute("SELECT count(*) FROM audit_events").fetchone()
    assert rows == (0,)


async def test_file_retention_deletes_old_day_files(tmp_path: Path) -> None:
    """A day file past the retention is removed when the log next writes."""
    url = audit_url("file", tmp_path)
    old = event(at=datetime.now(UTC) - timedelta(days=5))
    async with open_audit_log(url, max_days=2, stream=io.StringIO) as log:
        await log.record([old], durable=True)

    assert list((tmp_path / "audit").glob("audit-*.jsonl")) == []


async def test_a_durable_sqlite_event_is_visible_to_another_connection(
    tmp_path: Path,
) -> None:
    """record(durable=True) has committed when it returns."""
    url = audit_url("sqlite", tmp_path)
    written = event(at=recent(1))
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record([written], durable=True)

        with sqlite3.connect(tmp_path / "wenchang.db") as database:
            rows = database.execute("SELECT id FROM audit_events").fetchall()

    assert rows == [(written.id,)]


async def test_file_lines_are_json_records_per_day(tmp_path: Path) -> None:
    """The file log writes one JSON object per line into the event's UTC day."""
    url = audit_url("file", tmp_path)
    written = event(at=recent(1), files=("notes/tea",))
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record([written], durable=True)

    day = written.at.date().isoformat()
    lines = (tmp_path / "audit" / f"audit-{day}.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    assert record["id"] == written.id
    assert record["files"] == ["notes/tea"]


async def test_stdout_writes_one_json_line_per_event() -> None:
    """The stream log prints each event at once, as one JSON line."""
    stream = io.StringIO()
    first, second = event(at=recent(2)), event(at=recent(1), files=("notes/a",))
    async with open_audit_log("stdout", max_days=365, stream=lambda: stream) as log:
        await log.record([first], durable=False)
        await log.record([second], durable=True)

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["id"] for line in lines] == [first.id, second.id]
    assert set(lines[0]) == {
        "id",
        "at",
        "request_id",
        "surface",
        "actor",
        "token_id",
        "operation",
        "scope",
        "entity_id",
        "area",
        "name",
        "outcome",
        "version",
        "files",
        "files_omitted",
    }


@pytest.mark.parametrize("url", ["stdout", "none"])
async def test_a_store_that_keeps_nothing_cannot_be_queried(url: str) -> None:
    """stdout and none answer a query with AUDIT_UNAVAILABLE."""
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        with pytest.raises(AppError) as raised:
            await log.query(AuditSelection(subjects=(ALICE,)), before=None, limit=10)

    assert raised.value.definition is audit_unavailable


async def test_concurrent_durable_events_share_writes_and_all_land() -> None:
    """Durable callers that arrive during a write are carried by the next one."""
    batches: list[list[str]] = []

    async def write(events: Sequence[AuditEvent]) -> None:
        await asyncio.sleep(0)
        batches.append([e.id for e in events])

    buffer = AuditBuffer(write)
    written = [event(at=recent(1)) for _ in range(20)]

    await asyncio.gather(*(buffer.add([e], durable=True) for e in written))

    assert sorted(i for batch in batches for i in batch) == sorted(
        e.id for e in written
    )
    assert len(batches) < len(written)


async def test_a_failed_write_keeps_its_events_and_tells_the_durable_caller() -> None:
    """The durable caller sees the failure; the next write carries the events."""
    attempts: list[list[str]] = []

    async def write(events: Sequence[AuditEvent]) -> None:
        attempts.append([e.id for e in events])
        if len(attempts) == 1:
            raise OSError("disk full")

    buffer = AuditBuffer(write)
    read, mutation = event(at=recent(2)), event(at=recent(1))
    await buffer.add([read], durable=False)

    with pytest.raises(OSError):
        await buffer.add([mutation], durable=True)
    await buffer.close()

    assert attempts == [[read.id, mutation.id], [read.id, mutation.id]]


async def yield_until(done: Callable[[], bool]) -> None:
    """Let the loop run the tasks it holds (no clock involved) until ``done``."""
    for _ in range(20):
        if done():
            return
        await asyncio.sleep(0)


def counting_buffer() -> tuple[list[int], AuditBuffer]:
    """A buffer and the size of each batch it writes."""
    batches: list[int] = []

    async def write(events: Sequence[AuditEvent]) -> None:
        batches.append(len(events))

    return batches, AuditBuffer(write)


async def test_256_buffered_events_are_written_without_waiting() -> None:
    """The buffer starts writing as soon as it holds 256 events, not on its timer."""
    batches, buffer = counting_buffer()

    await buffer.add([event(at=recent(1)) for _ in range(255)], durable=False)
    await yield_until(lambda: bool(batches))
    before = list(batches)
    await buffer.add([event(at=recent(1))], durable=False)
    await yield_until(lambda: bool(batches))

    assert (before, batches) == ([], [256])
    await buffer.close()


@dataclass
class CountedDraft:
    """A draft that counts how often its events were built."""

    built: list[AuditEvent]
    builds: int = 0

    @property
    def size(self) -> int:
        return len(self.built)

    def events(self) -> list[AuditEvent]:
        self.builds += 1
        return self.built


async def test_a_draft_is_built_once_when_the_buffer_is_written() -> None:
    """A read's events are built at the write, off the request, exactly once."""
    written: list[str] = []

    async def write(events: Sequence[AuditEvent]) -> None:
        written.extend(e.id for e in events)

    buffer = AuditBuffer(write)
    draft = CountedDraft([event(at=recent(1))])
    buffer.add_draft(draft)
    built_before_write = draft.builds
    await buffer.flush()

    assert (built_before_write, draft.builds) == (0, 1)
    assert written == [draft.built[0].id]
    await buffer.close()


async def test_drafts_count_their_events_towards_256() -> None:
    """128 drafts of two events each start a write, as 256 events do."""
    batches, buffer = counting_buffer()
    for _ in range(128):
        buffer.add_draft(CountedDraft([event(at=recent(1)), event(at=recent(1))]))
    await yield_until(lambda: bool(batches))

    assert batches == [256]
    await buffer.close()


async def test_a_log_that_keeps_nothing_never_builds_a_draft() -> None:
    draft = CountedDraft([event(at=recent(1))])
    async with open_audit_log("none", max_days=365, stream=io.StringIO) as log:
        log.record_later(draft)
        await log.flush()

    assert draft.builds == 0


async def test_256_staged_events_start_a_write_as_256_queued_ones_do() -> None:
    """A store's own events (staged by writes) are written on the same terms."""
    batches, buffer = counting_buffer()
    for _ in range(255):
        buffer.poke()
    await yield_until(lambda: bool(batches))
    before = list(batches)
    buffer.poke()
    await yield_until(lambda: bool(batches))

    assert (before, batches) == ([], [0])
    await buffer.close()


@pytest.mark.parametrize("kind", ["sqlite", "file"])
async def test_text_no_store_can_encode_is_kept_as_replacement_characters(
    kind: str, tmp_path: Path
) -> None:
    """A lone surrogate (JSON ``\\ud800``) cannot be written as UTF-8; retrying it
    would hold every later event back, so the event is kept with U+FFFD."""
    poisoned = event(at=recent(2), name="tea\ud800", files=("notes/\udcff",))
    later = event(at=recent(1))
    url = audit_url(kind, tmp_path)
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record([poisoned], durable=False)
        await log.record([later], durable=True)
        found = await every_event(log, AuditSelection(subjects=(ALICE,)))

    assert [(e.id, e.name, e.files) for e in found] == [
        (later.id, "tea", ()),
        (poisoned.id, "tea\ufffd", ("notes/\ufffd",)),
    ]
