"""A file moved to another path: the storage capability and the guarded move."""

from typing import Protocol, runtime_checkable

from app.shared import errors

from ..domain.expiry import Expiry
from ..domain.keys import Address
from . import Change, Storage, StoredObject, VersionRecord
from .own_writes import as_file, recognising_own_write
from .storage_reads import (
    CREATE_ATTEMPTS,
    conflict_with,
    live,
    load_existing,
    raise_current_state,
    require_version,
)

RENAME = "rename_file"
"""The operation a rename's version record and change-log entries name."""


@runtime_checkable
class Renames(Protocol):
    """Storage that moves a file to another key in one atomic step, with its history.

    Every adapter implements it (``tests/support/storage_conformance``);
    storage that did not would be refused as BACKEND_UNAVAILABLE (reason
    ``unsupported``) before anything is written.
    """

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        """Move ``source`` (only at version ``expected``) to ``destination``.

        Only if ``destination`` is at version ``replacing`` (None: absent; a
        version: an expired file the move replaces). The destination then
        holds the source's data and metadata under a new version, returned,
        and the source key is absent; no reader ever sees both or neither.
        History moves too: the destination's records are its own earlier ones
        (of a file deleted there), then the source's, then the rename's
        (``change``); the source keeps none. A change feed logs two entries,
        the source's then the destination's, both with the new version.
        None (nothing changed) when either precondition failed.
        """
        ...


async def rename_existing(
    storage: Storage,
    source: Address,
    target: Address,
    expected: str,
    change: Change,
    *,
    now: Expiry | None = None,
) -> StoredObject:
    """The file at ``source`` moved to ``target``, guarded by ``expected``.

    MEMORY_NOT_FOUND when there is no file at ``source``, VERSION_CONFLICT with
    it when it moved on, VERSION_CONFLICT naming ``target`` with the file there
    when one is (an expired one is replaced). A keyed call refused over its own
    landed rename answers it. Returns the file at ``target``.
    """
    if not isinstance(storage, Renames):
        raise errors.backend_unavailable_error(
            "unsupported", "this storage cannot rename files"
        )

    async def attempt() -> StoredObject:
        for _ in range(CREATE_ATTEMPTS):
            stored = await load_existing(storage, source, now=now)
            require_version(source, stored, expected)
            taken = await storage.get(target.key)
            if taken is not None and live(taken, now) is not None:
                raise conflict_with(target, taken)
            replacing = None if taken is None else taken.version
            version = await storage.rename_if_version(
                source.key, target.key, expected, replacing=replacing, change=change
            )
            if version is not None:
                return StoredObject(stored.data, stored.metadata, version)
        await raise_current_state(storage, target, now=now)

    def own(record: VersionRecord) -> StoredObject | None:
        return as_file(record) if record.operation == RENAME else None

    return await recognising_own_write(storage, target, change.call, attempt, own)
