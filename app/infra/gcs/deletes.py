"""Deletes on GCS: a tombstone replaces the object at its generation, then goes.

The tombstone is a conditional upload like every write (``gcs_outcomes``), so
a delete whose answer was lost is resolved by the write id it carries, never
guessed: a purge counts exactly the objects it removed, and a repeated purge
finds only what is left. A call's delete archives the tombstone's record and
removes the tombstone; a purge's tombstone holds none of the file's metadata
and stays, unarchived, until the purge's scrub erases it with the entity's
history.
"""

import contextlib
from dataclasses import replace

from tenchi.errors import AppError

from app.features.memory.ports import Change, FileMetadata
from app.infra.gcs.history import LIST_BATCH, SEPARATOR, change_map, is_tombstone
from app.infra.gcs.outcomes import GcsWrites
from app.infra.gcs.resources import ObjectResource
from app.infra.object_metadata import metadata_from_map
from app.shared.clock import utc_now

PURGE = "purge"
"""The operation and actor of a purge's tombstone."""


class GcsDeletes(GcsWrites):
    """Conditional uploads and deletes of one location's keys; a delete is the
    tracked upload of a tombstone."""

    async def remove(
        self,
        key: str,
        current: ObjectResource,
        change: Change | None,
        stamp: dict[str, str] | None = None,
    ) -> str | None:
        """Delete ``current`` (live, its record archived): the tombstone's
        version, or None if it changed.

        ``change`` None is a purge's delete; ``stamp`` its change-log claim's.
        """
        values = tombstone_map(current, change) | (stamp or {})
        generation = str(current["generation"])
        tombstone = await self.upload(key, b"", values, generation)
        if tombstone is None:
            return None
        if change is None:
            # A purge's tombstones stay until its scrub erases them: removing
            # each now would be a second mutation of the object at once, which
            # GCS rate-limits (about one per second per object).
            return tombstone
        # The delete has landed; a tombstone left behind by a failure here is a
        # state every reader and the next create handle.
        with contextlib.suppress(AppError):
            resource: ObjectResource = {
                "name": self._prefix + key,
                "generation": tombstone,
                "metadata": values,
            }
            await self._history.archive(key, resource, b"")
            await self._objects.delete(
                self._prefix + key, {"ifGenerationMatch": tombstone}
            )
        await self._history.prune(key, None, change.at)
        return tombstone

    async def erase_leftovers(self, key: str) -> None:
        """Erase every generation of ``key``'s object that is not live (its
        tombstone, noncurrent ones) and every archived record of exactly it."""
        name = self._prefix + key
        params = {"prefix": name, "versions": "true", "maxResults": str(LIST_BATCH)}
        params["fields"] = "items(name,generation,timeDeleted,metadata),nextPageToken"
        async for item in self._objects.items(params):
            stale = item.get("timeDeleted") or is_tombstone(item)
            if item["name"] == name and stale:
                await self._objects.erase(name, str(item["generation"]))
        await self._history.scrub(key + SEPARATOR)


def tombstone_map(current: ObjectResource, change: Change | None) -> dict[str, str]:
    """The metadata of ``change``'s tombstone over ``current`` (None: a purge's)."""
    if change is None:
        now = utc_now()
        return change_map(
            FileMetadata("", (), (), now), Change(PURGE, PURGE, now), deleted=True
        )
    metadata = metadata_from_map(current.get("metadata") or {})
    return change_map(replace(metadata, last_updated=change.at), change, deleted=True)
