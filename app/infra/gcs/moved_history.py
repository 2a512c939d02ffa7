"""A renamed file's archived records, copied after the records its new key has.

A key's archive lists newest first by each record's order, its generation.
A rename's destination may hold records of its own (a file deleted or
replaced there), newer than some of the source's; the port wants them all
before the source's. So when the source's oldest record is not newer than
the destination's newest own one, the source's records take the orders just
above it, oldest first (still below the rename's own, far newer generation),
and keep their versions in their metadata: ``GcsHistory`` finds a record by
its version by listing when its name does not say it. Every copy carries the
commit's id (``MOVED_BY``), so a settler that runs the copy again computes
the same places and writes the same objects, given every record: the
source's go only once the destination is rewritten unmarked, so records
listed while it was still marked are all of them.
"""

import contextlib

from app.infra.gcs.history import (
    LIST_BATCH,
    LIST_FIELDS,
    GcsHistory,
    archived_version,
    record_of,
)
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.resources import ObjectResource

MOVED_BY = "moved-by"


def _order(item: ObjectResource) -> int:
    return int(record_of(item, None).version)


def _values(item: ObjectResource) -> dict[str, str]:
    return item.get("metadata") or {}


class MovedHistory:
    """Copies and erases the archived records a rename moves."""

    def __init__(self, objects: GcsObjects, history: GcsHistory) -> None:
        self._objects, self._history = objects, history

    async def _archived(self, key: str) -> list[ObjectResource]:
        params = {"prefix": self._history.key_prefix(key), "fields": LIST_FIELDS}
        params["maxResults"] = str(LIST_BATCH)
        found: list[ObjectResource] = []
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                version = archived_version(item)
                if version is not None and version.isdigit():
                    found.append(item)
        return found

    async def moved(self, source: str, upto: int) -> list[ObjectResource]:
        """The records of ``source`` a rename of its version ``upto`` moves."""
        return [item for item in await self._archived(source) if _order(item) <= upto]

    async def copy(
        self, records: list[ObjectResource], destination: str, commit: str
    ) -> None:
        """Copy the ``moved`` records (every one) after ``destination``'s own."""
        moving = sorted(records, key=_order)
        there = await self._archived(destination)
        own = [_order(i) for i in there if _values(i).get(MOVED_BY) != commit]
        top = max(own, default=0)
        renumber = bool(moving) and _order(moving[0]) <= top
        for place, item in enumerate(moving, start=1):
            order = top + place if renumber else _order(item)
            name = str(item["name"])
            data = await self._objects.download(name, str(item["generation"]))
            if data is None:
                continue  # erased by a settler that copied it already
            values = _values(item) | {MOVED_BY: commit}
            copy = self._history.order_name(destination, order)
            await self._objects.upload(copy, data, values, None)
