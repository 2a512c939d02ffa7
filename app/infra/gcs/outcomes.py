"""Conditional uploads whose answer went missing, resolved by the write id they carry.

Every tracked conditional upload stamps its metadata with a fresh write id (an
untracked one is recognised by its body's MD5 and its metadata). When an
attempt went unanswered and the call then failed, or a retry met a failed
precondition (``OutcomeUnknown``), the object is looked at, never guessed:
it, or the key's archive (when another write replaced it since), holding our
write id means the write landed, and its generation is the answer. Another
write in its place, the archive reaching back to the generation ours was
conditioned on, means ours did not land and never can (its precondition is
spent): the precondition failed. Anything else, or no answer within the
check's own budget, is reported as an outcome unknown, never as a conflict.
"""

import asyncio
import base64
import contextlib
import hashlib
import uuid

from tenchi.errors import AppError

from app.infra.gcs.history import OPERATION, VERSION, GcsHistory
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.requests import OutcomeUnknown
from app.infra.gcs.resources import ObjectResource
from app.shared.errors import outcome_unknown_error

WRITE = "write"
"""The metadata key of the id unique to each conditional upload."""
CHECK_SECONDS = 5.0
ABSENT = "0"


class _NotLanded(Exception):
    """The write provably did not land."""


class GcsWrites:
    """Conditional uploads of one location's keys, each resolved when in doubt."""

    def __init__(
        self, objects: GcsObjects, history: GcsHistory, prefix: str, budget: float
    ) -> None:
        self._objects = objects
        self._history = history
        self._prefix = prefix
        self._budget = min(budget, CHECK_SECONDS)

    async def upload(
        self, key: str, data: bytes, values: dict[str, str], generation: str
    ) -> str | None:
        """Write ``key`` only at ``generation`` ("0": absent); None if it was not."""
        tracked = OPERATION in values
        if tracked and WRITE not in values:
            # A write the change log records carries its claim's id already.
            values = values | {WRITE: uuid.uuid4().hex}
        try:
            return await self._objects.upload(
                self._prefix + key, data, values, generation
            )
        except OutcomeUnknown:
            pass
        ours = _Ours(values, data)
        try:
            async with asyncio.timeout(self._budget):
                return await self._landed(key, ours, generation, tracked=tracked)
        except _NotLanded:
            return None
        except (TimeoutError, AppError) as exc:
            raise outcome_unknown_error() from exc

    async def _landed(
        self, key: str, ours: "_Ours", generation: str, *, tracked: bool
    ) -> str:
        current = await self._objects.describe(self._prefix + key)
        if current is not None and ours.made(current):
            return str(current["generation"])
        standing = ABSENT if current is None else str(current["generation"])
        if standing == generation:
            raise outcome_unknown_error()  # ours may still land
        found = await self._archived(key, ours, generation) if tracked else None
        if found is not None:
            return found
        if generation == ABSENT and tracked:
            # A tracked write is archived before anything replaces it, and the
            # whole archive of the key holds no write of ours.
            raise _NotLanded
        raise outcome_unknown_error()

    async def _archived(self, key: str, ours: "_Ours", generation: str) -> str | None:
        """Our write's version in the archive (newest first) back to ``generation``.

        Reaching ``generation``'s own record without ours means ours never landed.
        """
        params = {"prefix": self._history.key_prefix(key), "fields": LIST_FIELDS}
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                values = _values(item)
                if values.get(WRITE) == ours.values[WRITE]:
                    return values.get(VERSION) or str(item["generation"])
                if values.get(VERSION) == generation:
                    raise _NotLanded
        return None


LIST_FIELDS = "items(name,generation,metadata),nextPageToken"


def _values(resource: ObjectResource) -> dict[str, str]:
    return resource.get("metadata") or {}


class _Ours:
    """What only our upload left on an object: its write id, else body and map."""

    def __init__(self, values: dict[str, str], data: bytes) -> None:
        self.values = values
        self._md5 = base64.b64encode(hashlib.md5(data).digest()).decode()

    def made(self, resource: ObjectResource) -> bool:
        found = _values(resource)
        if WRITE in self.values:
            return found.get(WRITE) == self.values[WRITE]
        return found == self.values and resource.get("md5Hash") == self._md5
