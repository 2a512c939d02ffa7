"""JSON-lines audit log: one file of events per UTC day under a directory.

Appends, erasures and retention hold ``dir/.lock`` exclusively, so several
processes may share the directory; all file work runs in a worker thread. An
erasure first records its marker in ``erasures.json`` (a digest of the entity:
an append drops events of an entity erased after they happened), then rewrites
each day file holding the entity's events without them, by atomic replace.
Writes reach the operating system before ``record`` returns (a process crash
keeps them), like the SQLite database in its ``synchronous=NORMAL`` mode.
"""

import asyncio
import fcntl
import json
import os
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Literal

from app.features.audit.domain import PURGE
from app.features.audit.domain.marks import erasure_key, parse_stamp, stamp
from app.features.audit.domain.pages import page_of
from app.features.audit.ports import (
    AuditEvent,
    AuditPage,
    AuditSelection,
    Position,
    Subject,
)
from app.infra.audit_buffer import BufferedLog
from app.infra.audit_records import AuditRecord, event_from_record, event_to_line
from app.infra.durable_files import replace_file
from app.shared.errors import backend_unavailable_error

LOCK_NAME = ".lock"
ERASURES_NAME = "erasures.json"
DAY_PREFIX = "audit-"
DAY_SUFFIX = ".jsonl"
SWEEP_INTERVAL_SECONDS = 60.0


def _day_file(root: Path, day: date) -> Path:
    return root / f"{DAY_PREFIX}{day.isoformat()}{DAY_SUFFIX}"


def _day_files(root: Path) -> list[tuple[date, Path]]:
    found: list[tuple[date, Path]] = []
    for path in root.glob(f"{DAY_PREFIX}*{DAY_SUFFIX}"):
        stem = path.name[len(DAY_PREFIX) : -len(DAY_SUFFIX)]
        try:
            found.append((date.fromisoformat(stem), path))
        except ValueError:
            continue
    return sorted(found)


def _subject_key(scope: str | None, entity_id: str | None) -> str:
    return f"{scope}\0{entity_id}"


def _records(path: Path) -> Iterable[AuditRecord]:
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                yield json.loads(line)


def _line(record: AuditRecord) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _is_newer(record: AuditRecord, before: Position) -> bool:
    at = stamp(before.at)
    return record["at"] > at or (record["at"] == at and record["id"] >= before.id)


def _selects(
    record: AuditRecord, subjects: set[str], selection: AuditSelection
) -> bool:
    if _subject_key(record["scope"], record["entity_id"]) not in subjects:
        return False
    wanted: tuple[tuple[Literal["operation", "area", "name"], str | None], ...] = (
        ("operation", selection.operation),
        ("area", selection.area),
        ("name", selection.name),
    )
    if any(value is not None and record[key] != value for key, value in wanted):
        return False
    return selection.until is None or record["at"] <= stamp(selection.until)


class FileAuditLog(BufferedLog):
    def __init__(self, root: Path, *, max_days: int) -> None:
        super().__init__(self._append)
        self._root = root
        self._max_age = timedelta(days=max_days)
        self._swept_at: float | None = None

    async def _run[T](self, function: Callable[..., T], *arguments: object) -> T:
        try:
            return await asyncio.to_thread(function, *arguments)
        except OSError as exc:
            raise backend_unavailable_error("unavailable") from exc

    @contextmanager
    def _locked(self) -> Generator[None]:
        self._root.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self._root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def _erasures(self) -> dict[str, str]:
        try:
            return json.loads((self._root / ERASURES_NAME).read_text())
        except FileNotFoundError:
            return {}

    def _floor(self) -> datetime:
        return datetime.now(UTC) - self._max_age

    async def _append(self, events: Sequence[AuditEvent]) -> None:
        await self._run(self._append_now, list(events))

    def _append_now(self, events: list[AuditEvent]) -> None:
        with self._locked():
            erased = self._erasures()
            by_day: dict[date, list[str]] = {}
            for event in events:
                marker = erased.get(erasure_key(event.scope, event.entity_id))
                if (
                    marker is None
                    or marker < stamp(event.at)
                    or event.operation == PURGE
                ):
                    day = event.at.astimezone(UTC).date()
                    by_day.setdefault(day, []).append(event_to_line(event))
            for day, lines in by_day.items():
                with _day_file(self._root, day).open("a", encoding="utf-8") as stream:
                    stream.write("".join(lines))
            self._sweep()

    def _sweep(self) -> None:
        now = time.monotonic()
        if self._swept_at is not None and now - self._swept_at < SWEEP_INTERVAL_SECONDS:
            return
        self._swept_at = now
        oldest = self._floor().date()
        for day, path in _day_files(self._root):
            if day < oldest:
                path.unlink(missing_ok=True)

    async def query(
        self, selection: AuditSelection, *, before: Position | None, limit: int
    ) -> AuditPage:
        await self._buffer.flush()
        events = await self._run(self._select, selection, before, limit + 1)
        return page_of(events, limit)

    def _select(
        self, selection: AuditSelection, before: Position | None, count: int
    ) -> list[AuditEvent]:
        subjects = {_subject_key(s.scope, s.entity_id) for s in selection.subjects}
        floor = stamp(max(self._floor(), selection.since or self._floor()))
        chosen: list[AuditRecord] = []
        with self._locked():
            for day, path in reversed(_day_files(self._root)):
                if day < parse_stamp(floor).date() or len(chosen) >= count:
                    break
                chosen += [
                    record
                    for record in _records(path)
                    if record["at"] >= floor
                    and _selects(record, subjects, selection)
                    and (before is None or not _is_newer(record, before))
                ]
        chosen.sort(key=lambda record: (record["at"], record["id"]), reverse=True)
        return [event_from_record(record) for record in chosen[:count]]

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        self._buffer.discard(subject, until=at)
        await self._run(self._erase_now, subject, stamp(at))

    def _erase_now(self, subject: Subject, at: str) -> None:
        key = _subject_key(subject.scope, subject.entity_id)
        digest = erasure_key(subject.scope, subject.entity_id)
        with self._locked():
            erased = self._erasures()
            erased[digest] = max(erased.get(digest, at), at)
            erasures = os.path.join(self._root, ERASURES_NAME)
            replace_file(erasures, json.dumps(erased).encode())
            for _, path in _day_files(self._root):
                records = list(_records(path))
                kept = [
                    r
                    for r in records
                    if _subject_key(r["scope"], r["entity_id"]) != key or r["at"] > at
                ]
                if len(kept) != len(records):
                    lines = (_line(r) for r in kept)
                    replace_file(os.fspath(path), "".join(lines).encode())
