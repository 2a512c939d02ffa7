"""GCS renames: a marked destination object, committed by the source's tombstone.

GCS changes one object at a time, so a rename writes the destination first,
marked pending (``RENAMING`` names the source; the marker also holds the
source's generation and the id of the commit), and commits by replacing the
source at exactly that generation with a tombstone carrying the commit's id:
a conditional upload, resolved like every write when its answer is lost.
Until then every reader treats the marked object as absent, and a write
that changes the source first spends the commit's precondition, so the
rename fails instead of losing that write. After the commit the rename
rolls forward, each step idempotent: the source's archived records are
copied after the destination's own (``gcs.moved_history``), the
destination is rewritten unmarked (``ifGenerationMatch`` on the marked
generation; the new generation is the rename's version, and a late roll
back now fails its own precondition), then the source's tombstone and
records go. Whoever meets a marked object settles it the same way: the
commit's id on the source (its tombstone, or its archive once a new file
replaced that) rolls it forward; a source that moved on without it, or a
marker older than the bound its writer wrote in it (``BOUND``: it never commits
that late, so it crashed; a reader's own bound, maybe shorter, serves only a
mark without one), rolls it back, deleting the marked generation. A writer that
meets one (a create of the destination, say) waits for it to settle, so of
a rename and a create of its destination exactly one wins.
"""

import asyncio
import contextlib
import time

from tenchi.errors import AppError

from app.features.memory.domain import parse_timestamp
from app.features.memory.ports import Change, Write
from app.infra.gcs.change_log import SEQ, WRITE, GcsChangeLog
from app.infra.gcs.deletes import GcsDeletes, tombstone_map
from app.infra.gcs.history import (
    RENAMING,
    GcsHistory,
    change_map,
    generation_of,
    is_pending,
    is_tombstone,
    is_tracked,
)
from app.infra.gcs.logged_writes import LoggedWrite
from app.infra.gcs.moved_history import MovedHistory
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.resources import ObjectResource
from app.infra.history_records import without_data, written
from app.infra.object_metadata import metadata_from_map
from app.shared.clock import utc_now
from app.shared.errors import backend_unavailable_error

GENERATION = "renaming-generation"
COMMIT = "renaming-commit"
FINAL_WRITE, FINAL_SEQ = "renaming-write", "renaming-seq"
BOUND = "renaming-seconds"
MARKER = (RENAMING, GENERATION, COMMIT, FINAL_WRITE, FINAL_SEQ, BOUND)
PENDING_SECONDS = 60.0
"""How long a marked object may wait for its commit before readers roll it back
(at least four request deadlines: its writer commits only within the first half)."""
WAIT_SECONDS = 0.05
"""How often a writer that met a pending rename looks again."""
LIST_FIELDS = "items(name,generation,metadata),nextPageToken"
SETTLE_STEPS = 8
"""Marks one read may meet at a key (each rename settled is one)."""


def _values(resource: ObjectResource | None) -> dict[str, str]:
    return {} if resource is None else resource.get("metadata") or {}


class GcsRenames:
    """Renames of one location's keys and the settling of their marked objects."""

    def __init__(
        self,
        objects: GcsObjects,
        history: GcsHistory,
        writes: GcsDeletes,
        log: GcsChangeLog,
        prefix: str,
        *,
        timeout: float,
        pending_seconds: float | None = None,
    ) -> None:
        self._objects, self._history, self._writes = objects, history, writes
        self._log, self._prefix = log, prefix
        self._moved = MovedHistory(objects, history)
        self._timeout = timeout
        bound = max(PENDING_SECONDS, 4 * timeout)
        self._pending = bound if pending_seconds is None else pending_seconds

    async def rename(
        self,
        source: str,
        destination: str,
        expected: str,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        """The port's ``rename_if_version``: the new version, or None."""
        self._history.require_room(destination)
        generation = generation_of(expected)
        current = await self.current(source)
        if generation is None or current is None or is_tombstone(current):
            return None
        wanted = None if replacing is None else generation_of(replacing)
        if str(current["generation"]) != generation or (replacing and not wanted):
            return None
        taken = await self.current(destination, wait=True)
        standing = None if taken is None or is_tombstone(taken) else taken
        if (standing and str(standing["generation"])) != wanted:
            return None
        data = await self._objects.download(self._prefix + source, generation)
        if data is None or not await self._archive(destination, taken):
            return None
        await self._history.archive(source, current, data)
        first = LoggedWrite(self._log, source, change)
        second = LoggedWrite(self._log, destination, change)
        commit, final = await first.stamp(current), await second.stamp(taken)
        values = change_map(metadata_from_map(_values(current)), change)
        values |= {RENAMING: source, GENERATION: generation, COMMIT: commit[WRITE]}
        values |= {FINAL_WRITE: final[WRITE], FINAL_SEQ: final[SEQ]}
        values[BOUND] = str(self._pending)
        started = time.monotonic()
        at = "0" if taken is None else str(taken["generation"])
        try:
            marked = await self._writes.upload(destination, data, values, at)
        except AppError:
            await self._abandon(destination, commit[WRITE])
            await first.end(None)  # only this call commits: it never will
            await second.end(None)
            raise
        version = None
        if marked is not None:
            resource: ObjectResource = {
                "name": self._prefix + destination,
                "generation": marked,
                "metadata": values,
            }
            # The commit (one request, within the deadline) must land well
            # before readers would find the mark stale and roll it back.
            late = time.monotonic() - started + self._timeout >= self._pending / 2
            if not late and await self._commit(source, current, change, commit):
                version = await self._forward(destination, resource)
                version = version or await self._finished(destination, final[WRITE])
            else:
                await self._roll_back(destination, resource)
        await first.end(version)
        await second.end(version)
        if version is not None:
            moved = Write(destination, data, metadata_from_map(values), change)
            newest = without_data(written(version, moved, change))
            await self._history.prune(destination, newest, change.at)
        return version

    async def _abandon(self, key: str, commit: str) -> None:
        # No commit was tried: the marked object, if it landed, can go now
        # rather than hold its path until readers find it stale. If this
        # fails too, those readers roll it back.
        with contextlib.suppress(AppError):
            found = await self._objects.describe(self._prefix + key)
            if found is not None and _values(found).get(COMMIT) == commit:
                await self._roll_back(key, found)

    async def _finished(self, key: str, write: str) -> str | None:
        """The version another settler finished this rename at."""
        found = await self._objects.describe(self._prefix + key)
        landed = found is not None and _values(found).get(WRITE) == write
        return str(found["generation"]) if found is not None and landed else None

    async def _archive(self, key: str, taken: ObjectResource | None) -> bool:
        """The replaced destination's record archived; False if it changed."""
        if taken is None or not is_tracked(taken):
            return True
        data = b""
        if not is_tombstone(taken):
            found = await self._objects.download(
                self._prefix + key, str(taken["generation"])
            )
            if found is None:
                return False
            data = found
        await self._history.archive(key, taken, data)
        return True

    async def _commit(
        self,
        source: str,
        current: ObjectResource,
        change: Change,
        stamp: dict[str, str],
    ) -> bool:
        values = tombstone_map(current, change) | stamp
        generation = str(current["generation"])
        return await self._writes.upload(source, b"", values, generation) is not None

    async def current(self, key: str, *, wait: bool = False) -> ObjectResource | None:
        """The object at ``key`` with any rename it stands for settled."""
        return await self.settled(
            key, await self._objects.describe(self._prefix + key), wait=wait
        )

    async def settled(
        self, key: str, resource: ObjectResource | None, *, wait: bool = False
    ) -> ObjectResource | None:
        """``resource`` (an object at ``key``) once any rename it marks is settled.

        A rename still pending leaves None (no file yet), or, with ``wait`` (a
        writer), is waited for until it commits or is rolled back.
        """
        steps = SETTLE_STEPS + (int(self._pending / WAIT_SECONDS) if wait else 0)
        for _ in range(steps):
            if resource is None or not is_pending(resource):
                return resource
            resource = await self._settle(key, resource, wait=wait)
        if resource is None or not is_pending(resource):
            return resource
        # Each step commits, rolls back or waits; one that keeps meeting a
        # mark is a backend not doing what it answers.
        raise backend_unavailable_error("unavailable")

    async def _settle(
        self, key: str, resource: ObjectResource, *, wait: bool
    ) -> ObjectResource | None:
        if "timeCreated" not in resource:
            described = await self._objects.describe(self._prefix + key)
            if described is None or not is_pending(described):
                return described
            resource = described
        values = _values(resource)
        source = values[RENAMING]
        found = await self._objects.describe(self._prefix + source)
        at = None if found is None or is_tombstone(found) else found["generation"]
        if str(at) == values[GENERATION]:
            if not self._stale(resource):
                if not wait:
                    return None
                await asyncio.sleep(WAIT_SECONDS)
                return await self._objects.describe(self._prefix + key)
        elif await self._committed(source, found, values[COMMIT]):
            await self._forward(key, resource)
            return await self._objects.describe(self._prefix + key)
        # The commit can no longer happen: its precondition is spent, or its
        # writer is past the time it ever commits in.
        await self._roll_back(key, resource)
        return await self._objects.describe(self._prefix + key)

    def _stale(self, resource: ObjectResource) -> bool:
        bound = float(_values(resource).get(BOUND, self._pending))
        created = parse_timestamp(str(resource.get("timeCreated")))
        return (utc_now() - created).total_seconds() >= bound

    async def _committed(
        self, source: str, found: ObjectResource | None, commit: str
    ) -> bool:
        """Whether the source holds the commit's id, on its object or archived."""
        if _values(found).get(WRITE) == commit:
            return True
        params = {"prefix": self._history.key_prefix(source), "fields": LIST_FIELDS}
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                if _values(item).get(WRITE) == commit:
                    return True
        return False

    async def _roll_back(self, key: str, resource: ObjectResource) -> None:
        name, generation = self._prefix + key, str(resource["generation"])
        await self._objects.delete(name, {"ifGenerationMatch": generation})

    async def _forward(self, key: str, resource: ObjectResource) -> str | None:
        """Finish a committed rename; its version, None if another settler did."""
        values = _values(resource)
        source, upto = values[RENAMING], int(values[GENERATION])
        moving = await self._moved.moved(source, upto)
        generation = str(resource["generation"])
        data = await self._objects.download(self._prefix + key, generation)
        if data is None:
            return None  # finished (or rolled back) by another: ``moving`` may be part
        await self._moved.copy(moving, key, values[COMMIT])
        final = {k: v for k, v in values.items() if k not in MARKER}
        final |= {WRITE: values[FINAL_WRITE], SEQ: values[FINAL_SEQ]}
        version = await self._writes.upload(key, data, final, generation)
        if version is not None:
            await self._tidy(source, values[COMMIT], upto)
        return version

    async def _tidy(self, source: str, commit: str, upto: int) -> None:
        # The rename is over; a tombstone or records left by a failure here
        # are what a delete leaves, which every reader and the next create handle.
        with contextlib.suppress(AppError):
            found = await self._objects.describe(self._prefix + source)
            if found is not None and _values(found).get(WRITE) == commit:
                generation = str(found["generation"])
                await self._objects.delete(
                    self._prefix + source, {"ifGenerationMatch": generation}
                )
            for item in await self._moved.moved(source, upto):
                await self._objects.erase(str(item["name"]), str(item["generation"]))
