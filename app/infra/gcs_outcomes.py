"""Conditional uploads whose answer went missing, resolved by the write id they carry.

Every conditional upload stamps its metadata with a fresh write id. When an
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
import contextlib
import uuid
from typing import Any

from tenchi.errors import AppError

from app.infra.gcs_history import OPERATION, VERSION, GcsHistory
from app.infra.gcs_objects import GcsObjects
from app.infra.gcs_requests import OutcomeUnknown
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
        write = uuid.uuid4().hex
        name = self._prefix + key
        try:
            return await self._objects.upload(
                name, data, values | {WRITE: write}, generation
            )
        except OutcomeUnknown:
            pass
        try:
            async with asyncio.timeout(self._budget):
                tracked = OPERATION in values
                return await self._landed(key, write, generation, tracked=tracked)
        except _NotLanded:
            return None
        except (TimeoutError, AppError) as exc:
            raise outcome_unknown_error() from exc

    async def _landed(
        self, key: str, write: str, generation: str, *, tracked: bool
    ) -> str:
        current = await self._objects.describe(self._prefix + key)
        if current is not None and _write_of(current) == write:
            return str(current["generation"])
        standing = ABSENT if current is None else str(current["generation"])
        if standing == generation:
            raise outcome_unknown_error()  # ours may still land
        found = await self._archived(key, write, generation)
        if found is not None:
            return found
        if generation == ABSENT and tracked:
            # A tracked write is archived before anything replaces it, and the
            # whole archive of the key holds no write of ours.
            raise _NotLanded
        raise outcome_unknown_error()

    async def _archived(self, key: str, write: str, generation: str) -> str | None:
        """Our write's version in the archive (newest first) back to ``generation``.

        Reaching ``generation``'s own record without ours means ours never landed.
        """
        params = {"prefix": self._history.key_prefix(key), "fields": LIST_FIELDS}
        async with contextlib.aclosing(self._objects.items(params)) as items:
            async for item in items:
                values = _values(item)
                if values.get(WRITE) == write:
                    return values.get(VERSION) or str(item["generation"])
                if values.get(VERSION) == generation:
                    raise _NotLanded
        return None


LIST_FIELDS = "items(name,generation,metadata),nextPageToken"


def _values(resource: dict[str, Any]) -> dict[str, str]:
    return resource.get("metadata") or {}


def _write_of(resource: dict[str, Any]) -> str | None:
    return _values(resource).get(WRITE)
