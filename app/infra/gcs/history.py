"""GCS version history: the current object names its change; older records are archived.

GCS has no multi-object transaction, so no write can add a record atomically.
Instead the object at a key carries the operation and actor of the write that
made it, and its record is read from the object itself while it is current.
Just before a write replaces a generation (which did land), that generation's
record is copied to an archive object keyed by its generation: writing it
early, or again after a lost reply, is harmless, and a writer that loses the
compare-and-swap leaves only a true record of the version it saw. A delete
replaces the object by a tombstone (compare-and-swap on its generation), which
get, list and count hide; the tombstone's record is then archived and the
tombstone object removed, so a later create needs no precondition but "absent".

Archive objects live under ``<prefix>\\history/<key>\\<order>``: no key has a
backslash, and ``order`` counts down with the generation so GCS lists a key's
history newest first (records a rename moved may sit at other orders, after
the key's own: ``gcs.moved_history``; their version is in their metadata).
"""

import contextlib
import logging
import re
from collections.abc import Sequence
from datetime import datetime

from tenchi.errors import AppError

from app.features.memory.ports import (
    Change,
    FileMetadata,
    HistoryRetention,
    VersionRecord,
)
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.resources import ObjectResource
from app.infra.history_records import expired
from app.infra.object_metadata import (
    ALIASES,
    DESCRIPTION,
    SOURCES,
    metadata_from_map,
    metadata_to_map,
)
from app.shared.errors import invalid_argument_error

HISTORY = "\\history/"
SEPARATOR = "\\"
OPERATION, ACTOR, DELETED, VERSION = "operation", "actor", "deleted", "version"
CALL = "call"
RENAMING = "renaming-from"
"""Marks a rename's destination until the rename is over (``gcs.renames``)."""
LIST_FIELDS = "items(name,generation,size,metadata),nextPageToken"
LIST_BATCH = 1000
_ORDER_BASE = 10**19 - 1
NAME_LIMIT = 1024
"""GCS refuses an object name of more bytes of UTF-8 than this."""
METADATA_LIMIT = 8192
"""GCS's cap on an object's custom metadata, every key and value in UTF-8."""
METADATA_ROOM = METADATA_LIMIT - NAME_LIMIT - 512
"""What a write's own metadata may take: a rename's mark adds the source key and
its own values (under 512 bytes), an archived record its version."""
_GENERATION = re.compile(r"[1-9][0-9]{0,18}")
_MAX_GENERATION = 2**63 - 1

logger = logging.getLogger(__name__)


def change_map(
    metadata: FileMetadata, change: Change | None, *, deleted: bool = False
) -> dict[str, str]:
    """The custom metadata of an object written by ``change`` (None: untracked)."""
    values = metadata_to_map(metadata)
    if change is not None:
        values |= {OPERATION: change.operation, ACTOR: change.actor}
        if change.call:
            values[CALL] = change.call
    if deleted:
        values[DELETED] = "true"
    return values


def require_metadata_room(values: dict[str, str]) -> None:
    """Refuse a write whose custom metadata leaves a rename no room under GCS's cap."""
    # Refused here, not by GCS: its 400 would reach the caller as an internal error.
    size = sum(len(key.encode()) + len(value.encode()) for key, value in values.items())
    if size > METADATA_ROOM:
        named = (DESCRIPTION, ALIASES, SOURCES)
        sizes = {name: len(values[name].encode()) for name in named}
        largest = max(sizes, key=lambda name: sizes[name])
        each = ", ".join(f"{name} {taken}" for name, taken in sizes.items())
        raise invalid_argument_error(
            largest,
            f"{size - METADATA_ROOM} bytes too large for GCS storage (custom "
            f"metadata: {METADATA_ROOM} bytes a file; {each})",
        )


def generation_of(version: str) -> str | None:
    """A version as a GCS generation, or None when it cannot be one."""
    if _GENERATION.fullmatch(version) and int(version) <= _MAX_GENERATION:
        return version
    return None


def _metadata(resource: ObjectResource) -> dict[str, str]:
    return resource.get("metadata") or {}


def is_tombstone(resource: ObjectResource) -> bool:
    return _metadata(resource).get(DELETED) == "true"


def is_pending(resource: ObjectResource) -> bool:
    """A rename's destination written before its commit: no file yet."""
    return RENAMING in _metadata(resource)


def is_tracked(resource: ObjectResource) -> bool:
    return OPERATION in _metadata(resource) and ACTOR in _metadata(resource)


def archived_version(resource: ObjectResource) -> str | None:
    """The version an archived object records (None: an old untracked copy)."""
    return record_of(resource, None).version if is_tracked(resource) else None


def record_of(resource: ObjectResource, data: bytes | None) -> VersionRecord:
    """The record an object (current or archived) stands for."""
    values = _metadata(resource)
    return VersionRecord(
        version=values.get(VERSION) or str(resource["generation"]),
        operation=values[OPERATION],
        actor=values[ACTOR],
        deleted=values.get(DELETED) == "true",
        size=int(resource.get("size") or 0),
        metadata=metadata_from_map(values),
        data=data,
        call=values.get(CALL, ""),
    )


class GcsHistory:
    """The history of keys under one location prefix: current objects and archive."""

    def __init__(
        self, objects: GcsObjects, prefix: str, retention: HistoryRetention
    ) -> None:
        self._objects = objects
        self._prefix = prefix
        self._retention = retention

    def key_prefix(self, key: str) -> str:
        return f"{self._prefix}{HISTORY}{key}{SEPARATOR}"

    def order_name(self, key: str, order: int) -> str:
        """The archive name of ``key``'s record at ``order``: its generation, or
        for a record a rename moved here its place (``gcs.moved_history``)."""
        return f"{self.key_prefix(key)}{_ORDER_BASE - order:019d}"

    def _name(self, key: str, generation: str) -> str:
        return self.order_name(key, int(generation))

    async def _record(self, key: str, generation: str) -> ObjectResource | None:
        """The archived object of ``key``'s version ``generation``: named by it,
        else (moved here by a rename, renumbered) found by listing."""
        described = await self._objects.describe(self._name(key, generation))
        if described is not None and archived_version(described) == generation:
            return described
        params = {"prefix": self.key_prefix(key), "fields": LIST_FIELDS}
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                if archived_version(item) == generation:
                    return item
        return None

    def require_room(self, key: str) -> None:
        """Refuse ``key`` if its longest object name (an archived one) is too long."""
        # Refused here, not by GCS: its 400 would reach the caller as an internal error.
        over = len(self._name(key, "0").encode()) - NAME_LIMIT
        if over > 0:
            detail = f"{over} bytes of UTF-8 too long for GCS storage"
            raise invalid_argument_error(
                "name", f"{detail} (object names: {NAME_LIMIT})"
            )

    async def archive(self, key: str, resource: ObjectResource, data: bytes) -> None:
        """Copy the record of ``resource`` (a generation that landed) to the archive."""
        if not is_tracked(resource):
            return  # written without a change: no record (a rename's source, say)
        generation = str(resource["generation"])
        values = _metadata(resource) | {VERSION: generation}
        await self._objects.upload(self._name(key, generation), data, values, None)

    async def read(self, key: str, generation: str) -> VersionRecord | None:
        for _ in range(2):
            described = await self._record(key, generation)
            if described is None:
                return None
            name = str(described["name"])
            data = await self._objects.download(name, str(described["generation"]))
            if data is not None:
                return record_of(described, data)
        return None

    async def versions(
        self, key: str, *, after: str | None, limit: int
    ) -> list[VersionRecord]:
        """The port's ``list_versions``: the current object's record, then archived."""
        current = await self._objects.describe(self._prefix + key)
        tracked = current is not None and is_tracked(current)
        newest = record_of(current, None) if current and tracked else None
        if current is not None and is_pending(current):
            newest = None  # resolved by readers of the file, not of its history
        found: list[VersionRecord] = []
        if newest is not None and after is None:
            found.append(newest)
        if after is not None and generation_of(after) is None:
            return []
        start = None if newest is not None and after == newest.version else after
        skip = newest.version if newest else None
        if limit > len(found):
            found += await self.listed(
                key, after=start, limit=limit - len(found), skip=skip
            )
        return found

    async def version(self, key: str, version: str) -> VersionRecord | None:
        """The port's ``get_version``: from the current object while it is that one."""
        generation = generation_of(version)
        if generation is None:
            return None
        name = self._prefix + key
        current = await self._objects.describe(name)
        if current is not None and str(current["generation"]) == generation:
            if not is_tracked(current):
                return None
            data = (
                b""
                if is_tombstone(current)
                else await self._objects.download(name, generation)
            )
            if data is not None:
                return record_of(current, data)
        return await self.read(key, generation)

    async def listed(
        self, key: str, *, after: str | None, limit: int, skip: str | None
    ) -> list[VersionRecord]:
        """Up to ``limit`` archived records, newest first, older than ``after``."""
        params = {"prefix": self.key_prefix(key), "fields": LIST_FIELDS}
        params["maxResults"] = str(min(limit + 2, LIST_BATCH))
        start = None
        if after is not None:
            located = await self._record(key, after)
            start = str(located["name"]) if located else self._name(key, after)
            params["startOffset"] = start
        found: list[VersionRecord] = []
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                version = archived_version(item)
                if version is None or item["name"] == start or version == skip:
                    continue
                found.append(record_of(item, None))
                if len(found) == limit:
                    break
        return found

    async def prune(
        self, key: str, newest: VersionRecord | None, now: datetime
    ) -> None:
        """Drop what retention no longer keeps; a failure here never fails the write."""
        with contextlib.suppress(AppError):
            await self._prune(key, newest, now)

    async def _prune(
        self, key: str, newest: VersionRecord | None, now: datetime
    ) -> None:
        # A whole page, not just the records the count limit keeps: with more
        # (a lowered limit) the oldest go first, as on every other adapter.
        params = {"prefix": self.key_prefix(key), "fields": LIST_FIELDS}
        params["maxResults"] = str(LIST_BATCH)
        items: list[ObjectResource] = (await self._objects.list(params)).get(
            "items", []
        )
        skip = newest.version if newest else None
        items = [item for item in items if archived_version(item) not in (None, skip)]
        records: Sequence[VersionRecord] = [record_of(item, None) for item in items]
        offset = 1 if newest is not None else 0
        newest_first = ([newest] if newest else []) + list(records)
        for position in expired(newest_first, self._retention, now):
            item = items[position - offset]
            await self._objects.erase(str(item["name"]), str(item["generation"]))

    async def scrub(self, prefix: str) -> None:
        """Erase every generation of every archived record of keys under ``prefix``."""
        params = {"prefix": f"{self._prefix}{HISTORY}{prefix}", "versions": "true"}
        params |= {"fields": "items(name,generation),nextPageToken"}
        params["maxResults"] = str(LIST_BATCH)
        async for item in self._objects.items(params):
            await self._objects.erase(str(item["name"]), str(item["generation"]))
