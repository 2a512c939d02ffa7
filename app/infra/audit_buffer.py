"""Group commit for an audit store: durable events share one write, reads wait.

Events queue in arrival order. A durable event, or a queue of 256, writes the
whole queue at once; otherwise a timer writes it within one second. Writes are
serialised, so a caller whose event a concurrent write carried finds it written
when its own turn comes. A failed write puts its events back at the head of
the queue: a durable caller sees the error, a timed write retries later.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from app.features.audit.ports import AuditEvent, Subject

logger = logging.getLogger("wenchang.audit")

MAX_EVENTS = 256
MAX_DELAY_SECONDS = 1.0
MAX_BACKLOG = 100_000
"""Events kept while the store is down; beyond this the oldest are dropped."""

Write = Callable[[Sequence[AuditEvent]], Awaitable[None]]


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
        self._queue: list[AuditEvent] = []
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None

    async def add(self, events: Sequence[AuditEvent], *, durable: bool) -> None:
        self._queue.extend(events)
        if durable:
            await self.flush()
        elif len(self._queue) >= self._max_events:
            await self._flush_quietly()
        elif self._queue and self._timer is None:
            self._timer = asyncio.create_task(self._flush_later())

    async def flush(self) -> None:
        async with self._lock:
            batch, self._queue = self._queue, []
            if not batch:
                return
            try:
                await self._write(batch)
            except BaseException:
                self._requeue(batch)
                raise

    def discard(self, subject: Subject, *, until: datetime) -> None:
        """Drop queued events of ``subject`` that happened at or before ``until``."""
        self._queue = [
            event
            for event in self._queue
            if event.at > until
            or event.scope != subject.scope
            or event.entity_id != subject.entity_id
        ]

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self.flush()

    def _requeue(self, batch: list[AuditEvent]) -> None:
        queue = batch + self._queue
        if len(queue) > MAX_BACKLOG:
            logger.error(
                "audit store unavailable: dropped the %d oldest unwritten events",
                len(queue) - MAX_BACKLOG,
            )
            queue = queue[-MAX_BACKLOG:]
        self._queue = queue

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
        except Exception:
            # No caller waits for these events: they stay queued for the next write.
            logger.exception("audit events could not be written; retrying")

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._max_delay)
        self._timer = None
        await self._flush_quietly()
        if self._queue and self._timer is None:
            self._timer = asyncio.create_task(self._flush_later())
