"""Listing and counting the files under a GCS prefix; tombstones and renames hidden."""

import contextlib
from collections.abc import Sequence

from app.features.memory import ports
from app.infra.gcs.change_log import LOG, WRITE
from app.infra.gcs.history import HISTORY, RENAMING, is_pending, is_tombstone
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.renames import FINAL_WRITE, GENERATION, GcsRenames
from app.infra.gcs.resources import ObjectResource
from app.infra.gcs.webhook_store import DIRECTORY as WEBHOOKS
from app.infra.object_metadata import listed_object, metadata_from_map

LIST_BATCH = 1000
LIST_FIELDS = "items(name,generation,metadata,timeCreated),nextPageToken"

NOT_FILES = (HISTORY, LOG, WEBHOOKS)
"""Key prefixes under the storage's prefix that hold no memory file."""


class GcsListing:
    """The port's ``list_page`` and ``count`` over one location prefix."""

    def __init__(self, objects: GcsObjects, prefix: str, renames: GcsRenames) -> None:
        self._objects, self._prefix, self._renames = objects, prefix, renames

    def _visible(self, item: ObjectResource) -> bool:
        # History, the change log and webhooks share the storage's prefix.
        key = str(item["name"])[len(self._prefix) :]
        return not is_tombstone(item) and not key.startswith(NOT_FILES)

    async def page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ports.ListedObject]:
        params = {"prefix": self._prefix + prefix, "fields": LIST_FIELDS}
        params["maxResults"] = str(min(limit + 1, LIST_BATCH))
        if start_after is not None:
            # startOffset is inclusive; the object named start_after is dropped.
            params["startOffset"] = self._prefix + start_after
        page: list[ports.ListedObject] = []
        seen: dict[str, str] = {}
        gone: set[str] = set()  # sources of renames settled as done
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                key = str(item["name"])[len(self._prefix) :]
                if start_after is not None and key <= start_after:
                    continue
                if not self._visible(item) or key in gone:
                    continue
                if is_pending(item):
                    item = await self._settled(key, item, seen, gone)
                    if item is None:
                        continue
                seen[key] = str(item["generation"])
                metadata = metadata_from_map(item.get("metadata") or {})
                page.append(listed_object(key, metadata, str(item["generation"])))
                if len(page) == limit:
                    break
        return page

    async def _settled(
        self, key: str, item: ObjectResource, seen: dict[str, str], gone: set[str]
    ) -> ObjectResource | None:
        """A rename's destination as this page shows it, which must agree with
        the source the same listing shows: one of the two, never both."""
        values: dict[str, str] = item.get("metadata") or {}
        source = values[RENAMING]
        if seen.get(source) == values[GENERATION]:
            return None  # listed before its commit, as the page shows
        settled = await self._renames.settled(key, item)
        if settled is None or is_tombstone(settled):
            return None
        now: dict[str, str] = settled.get("metadata") or {}
        if now.get(WRITE) == values[FINAL_WRITE]:
            gone.add(source)  # listed below, if at all, before the commit
        return settled

    async def count(self, prefix: str) -> int:
        params = {"prefix": self._prefix + prefix, "fields": LIST_FIELDS}
        params["maxResults"] = str(LIST_BATCH)
        items = self._objects.items(params)
        counted = [i async for i in items if self._visible(i) and not is_pending(i)]
        return len(counted)
