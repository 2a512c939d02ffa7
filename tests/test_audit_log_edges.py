"""The queryable audit logs at their edges: events sharing one moment, pages
across days, an erasure's exact moment and its marker; then the JSON-lines
log's own files (UTC day files, what an erasure rewrites, its retention sweep).
"""

import io
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import (
    AuditLog,
    AuditSelection,
    Position,
    Subject,
)
from app.infra.port_wiring import open_audit_log
from tests.support.audit_events import event

ALICE = Subject("user", "alice")
BOB = Subject("user", "bob")
EVERYONE = AuditSelection(subjects=(ALICE, BOB))


def ago(**delta: float) -> datetime:
    return datetime.now(UTC) - timedelta(**delta)


def url_of(kind: str, root: Path) -> str:
    return {
        "memory": "memory",
        "sqlite": f"sqlite:///{root / 'wenchang.db'}",
        "file": f"file://{root / 'audit'}",
    }[kind]


async def every_event(log: AuditLog, limit: int = 2) -> list[str]:
    """The ids of every event of Alice and Bob, a page of ``limit`` at a time."""
    found: list[str] = []
    before: Position | None = None
    while True:
        page = await log.query(EVERYONE, before=before, limit=limit)
        found += [e.id for e in page.events]
        if page.next_position is None:
            return found
        before = page.next_position


@pytest.fixture(params=["memory", "sqlite", "file"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return url_of(request.param, tmp_path)


async def test_events_of_one_moment_are_paged_each_once(url: str) -> None:
    """A page ending inside a moment shared by several events resumes after
    the last one it showed (by id), neither skipping nor repeating one."""
    moment = ago(minutes=5)
    written = [event(at=moment) for _ in range(4)]
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record(written, durable=True)
        found = await every_event(log, limit=1)

    assert found == sorted((e.id for e in written), reverse=True)


async def test_a_page_gathers_events_across_several_days(url: str) -> None:
    noon = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    written = [
        event(at=noon - timedelta(days=days, minutes=minutes))
        for days, count in ((3, 1), (2, 2), (1, 3))
        for minutes in range(count)
    ]
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record(written, durable=True)
        found = await every_event(log)

    assert found == [e.id for e in sorted(written, key=lambda e: e.at, reverse=True)]


async def test_an_erasure_drops_what_happened_until_its_moment_only(
    url: str,
) -> None:
    """Events up to the erasure's moment, stored or arriving later, are gone;
    a later event and the purge's own event are kept."""
    erased_at = ago(minutes=10)
    stored = event(at=erased_at)
    late = [event(at=erased_at - timedelta(minutes=1)), event(at=erased_at)]
    purge = event(at=erased_at, operation="memory.purge")
    after = [event(at=erased_at + timedelta(microseconds=1)), event(at=ago(minutes=1))]
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record([stored], durable=True)
        await log.erase(ALICE, at=erased_at)
        await log.record([*late, purge, *after], durable=True)
        found = await every_event(log)

    assert sorted(found) == sorted(e.id for e in (purge, *after))


async def test_an_earlier_erasure_never_moves_the_marker_back(url: str) -> None:
    """Two erasures (two processes' purges) keep the later moment: an event
    arriving between the two moments is still dropped."""
    first, second = ago(minutes=10), ago(minutes=20)
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.erase(ALICE, at=first)
        await log.erase(ALICE, at=second)
        between = event(at=ago(minutes=15))
        kept = event(at=ago(minutes=5))
        await log.record([between, kept], durable=True)
        found = await every_event(log)

    assert found == [kept.id]


# The JSON-lines log's own files.


def day_file(root: Path, moment: datetime) -> Path:
    return root / "audit" / f"audit-{moment.astimezone(UTC).date()}.jsonl"


async def test_an_erasure_keeps_the_other_lines_byte_for_byte(tmp_path: Path) -> None:
    moment = ago(minutes=5)
    bobs = [event(BOB, at=moment, name="thé"), event(BOB, at=moment, name="茶")]
    async with open_audit_log(
        url_of("file", tmp_path), max_days=365, stream=io.StringIO
    ) as log:
        await log.record([bobs[0]], durable=True)
        await log.record([event(at=moment)], durable=True)
        await log.record([bobs[1]], durable=True)
        lines = day_file(tmp_path, moment).read_text(encoding="utf-8").splitlines()
        await log.erase(ALICE, at=moment)

    kept = f"{lines[0]}\n{lines[2]}\n".encode()
    assert day_file(tmp_path, moment).read_bytes() == kept


@pytest.fixture
def thirteen_hours_east() -> Iterator[None]:
    """The process's local time zone is UTC+13 (POSIX rule: no tz database)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "XXX-13"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.usefixtures("thirteen_hours_east")
async def test_an_event_goes_to_its_utc_day_whatever_the_local_zone(
    tmp_path: Path,
) -> None:
    noon = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    written = event(at=noon - timedelta(days=1))
    async with open_audit_log(
        url_of("file", tmp_path), max_days=365, stream=io.StringIO
    ) as log:
        await log.record([written], durable=True)

    assert [p.name for p in (tmp_path / "audit").glob("audit-*")] == [
        day_file(tmp_path, written.at).name
    ]


async def test_names_like_day_files_that_are_no_dates_are_left_alone(
    tmp_path: Path,
) -> None:
    root = tmp_path / "audit"
    root.mkdir()
    strays = [root / f"audit-{n}.jsonl" for n in ("notes", *map(str, range(60)))]
    for stray in strays:
        stray.write_text("not json\n")
    written = event(at=ago(minutes=1))
    async with open_audit_log(f"file://{root}", max_days=1, stream=io.StringIO) as log:
        await log.record([written], durable=True)
        assert await every_event(log) == [written.id]
        await log.erase(BOB, at=ago(seconds=0))
        assert await every_event(log) == [written.id]

    assert all(stray.read_text() == "not json\n" for stray in strays)


async def test_the_retention_sweep_keeps_the_floor_s_day_and_runs_once_a_minute(
    tmp_path: Path,
) -> None:
    """The sweep at the first write removes only whole days past the
    retention; a day file older than that appearing later stays until the
    sweep after a minute."""
    inside = event(at=ago(days=1) + timedelta(minutes=10))
    async with open_audit_log(
        url_of("file", tmp_path), max_days=1, stream=io.StringIO
    ) as log:
        await log.record([inside], durable=True)
        assert await every_event(log) == [inside.id]

        old = day_file(tmp_path, ago(days=5))
        old.write_text(day_file(tmp_path, inside.at).read_text())
        await log.record([event(at=ago(minutes=1))], durable=True)
        assert old.exists()


async def test_a_log_that_cannot_reach_its_directory_is_unavailable(
    tmp_path: Path,
) -> None:
    blocking = tmp_path / "audit"
    blocking.write_text("a file where the directory should be")
    async with open_audit_log(
        url_of("file", tmp_path), max_days=1, stream=io.StringIO
    ) as log:
        with pytest.raises(AppError) as raised:
            await log.query(EVERYONE, before=None, limit=10)
        blocking.unlink()  # the closing flush reaches the directory

    assert raised.value.code == "BACKEND_UNAVAILABLE"
    assert raised.value.details["reason"] == "unavailable"
