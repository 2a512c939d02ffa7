"""Group commit for an audit store: durable events share one write, reads wait.

Events queue in arrival order, as built events or as drafts (a read's events,
built only when the queue is written, off the request). A durable event
writes the whole queue at once; a queue of 256 events is written by a task
started at once, otherwise a timer writes it within one second. A store with
work of its own (events its writes staged) is ``poke``d and written on the
same terms, each staged event counting as a queued one. Writes are
serialised, so a caller whose event a concurrent write carried finds it
written when its own turn comes. A failed write puts its events back at the
head of the queue: a durable caller sees the error, a timed write retries.
Text no store can encode (a lone surrogate) is written with U+FFFD in its
place, since retrying it would hold every later event back for good.
"""

import asyncio
import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.features.audit.ports import AuditEvent, EventDraft, Subject

logger = logging.getLogger("wenchang.audit")

MAX_EVENTS = 256
MAX_DELAY_SECONDS = 1.0
MAX_BACKLOG = 100_000
"""Events kept while the store is down; beyond this the oldest are dropped."""

Write = Callable[[Sequence[AuditEvent]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class _Built:
    """Events recorded already built: a draft of themselves."""

    built: Sequence[AuditEvent]

    @property
    def size(self) -> int:
        return len(self.built)

    def events(self) -> Sequence[AuditEvent]:
        return self.built


def _built(queue: list[EventDraft]) -> list[AuditEvent]:
    return [event for draft in queue for event in draft.events()]


_SURROGATE = re.compile("[\ud800-\udfff]")
"""What UTF-8 cannot encode: a surrogate code point standing alone in a str."""


def _encodable(value: object) -> object:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, tuple):
        return tuple(_encodable(item) for item in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return value


def _writable(event: AuditEvent) -> AuditEvent:
    """``event`` with each surrogate as U+FFFD."""
    changes = {
        field.name: _encodable(getattr(event, field.name))
        for field in dataclasses.fields(event)
    }
    return dataclasses.replace(event, **changes)


class AuditBuffer:
    def __init__(
        self,
        write: Write,
        *,
        max_events: int = MAX_EVENTS,
        max_delay: float = MAX_DELAY_SECONDS,
    ) -> None:
        self._write = write
        self._max_events = max_events
        self._max_delay = max_delay
        self._queue: list[EventDraft] = []
        self._count = 0
        """Events the queue holds plus the store's own (``poke``)."""
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self._soon: asyncio.Task[None] | None = None

    async def add(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        if not durable:
            return self.add_draft(_Built(events))
        self._queue.append(_Built(events))
        self._count += len(events)
        await self.flush()

    def add_draft(self, draft: EventDraft) -> None:
        """Queue ``draft``; its events are built when the queue is written."""
        self._queue.append(draft)
        self._count += draft.size
        self._schedule()

    def poke(self) -> None:
        """The store has one more event of its own to write (a staged one)."""
        self._count += 1
        self._schedule()

    async def flush(self, *, force: bool = False) -> None:
        """Write the queue (and the store's own work) now; ``force``: even if idle."""
        async with self._lock:
            batch, self._queue = self._queue, []
            count, self._count = self._count, 0
            if not (count or force):
                return
            events = _built(batch)
            try:
                await self._write_encodable(events)
            except BaseException:  # the events queued again, then re-raised
                self._requeue(events, count - len(events))
                raise

    async def _write_encodable(self, events: list[AuditEvent]) -> None:
        try:
            await self._write(events)
        except UnicodeEncodeError:
            logger.warning("audit events held text UTF-8 cannot encode: kept as U+FFFD")
            await self._write([_writable(event) for event in events])

    def discard(self, subject: Subject, *, until: datetime) -> None:
        """Drop queued events of ``subject`` that happened at or before ``until``."""
        kept = [
            event
            for event in _built(self._queue)
            if event.at > until
            or event.scope != subject.scope
            or event.entity_id != subject.entity_id
        ]
        self._count -= sum(draft.size for draft in self._queue) - len(kept)
        self._queue = [_Built(kept)]

    async def close(self) -> None:
        for task in (self._timer, self._soon):
            if task is not None:
                task.cancel()
        self._timer = self._soon = None
        await self.flush(force=True)

    def _schedule(self) -> None:
        if self._count >= self._max_events:
            if self._soon is None:
                self._soon = asyncio.create_task(self._flush_soon())
        elif self._timer is None:
            self._timer = asyncio.create_task(self._flush_later())

    def _requeue(self, events: list[AuditEvent], poked: int) -> None:
        queue = events + _built(self._queue)
        if len(queue) > MAX_BACKLOG:
            logger.error(
                "audit store unavailable: dropped the %d oldest unwritten events",
                len(queue) - MAX_BACKLOG,
            )
            queue = queue[-MAX_BACKLOG:]
        self._queue = [_Built(queue)]
        self._count = len(queue) + poked

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
        except Exception:
            # No caller waits for these events: they stay queued for the next write.
            logger.exception("audit events could not be written; retrying")

    async def _flush_soon(self) -> None:
        try:
            await self._flush_quietly()
        finally:
            self._soon = None
        if self._count:
            self._schedule()

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._max_delay)
        self._timer = None
        await self._flush_quietly()
        if self._count:
            self._schedule()


class BufferedLog:
    """The base of a store whose events wait in an ``AuditBuffer``."""

    def __init__(self, write: Write) -> None:
        self._buffer = AuditBuffer(write)

    async def record(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        await self._buffer.add(events, durable=durable)

    def record_later(self, draft: EventDraft) -> None:
        self._buffer.add_draft(draft)

    async def flush(self) -> None:
        await self._buffer.flush(force=True)

    async def close(self) -> None:
        await self._buffer.close()
