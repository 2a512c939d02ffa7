"""Reads through the Storage port that every operation shares.

A file read that must exist (else MEMORY_NOT_FOUND), a version record that
must exist (else MEMORY_NOT_FOUND, version_absent), a version check and the
current state after a failed precondition (VERSION_CONFLICT with what is there
now), and listings of a whole prefix in ``list_page`` batches.
"""

from collections.abc import AsyncIterator, Callable, Sequence
from typing import NoReturn

from tenchi.errors import AppError

from app.shared import errors
from app.shared.locations import is_url_segment

from ..domain.expiry import Expiry
from ..domain.keys import Address
from . import EditsInPlace, ListedObject, Storage, StoredObject, VersionRecord, Write

LIST_BATCH = 1000
CREATE_ATTEMPTS = 3
"""Creates tried while each loses to a file that is gone again when read."""


def live(stored: StoredObject | None, now: Expiry | None) -> StoredObject | None:
    """``stored`` unless it expired (``now`` None: expiry not applied)."""
    if stored is None or now is None or not now.expired(stored.metadata):
        return stored
    return None


async def load_existing(
    storage: Storage, address: Address, *, now: Expiry | None = None
) -> StoredObject:
    """The file, else MEMORY_NOT_FOUND; with ``now`` an expired file is none."""
    stored = live(await storage.get(address.key), now)
    if stored is None:
        raise errors.memory_not_found_error(address.location)
    return stored


async def edit_existing(
    storage: Storage,
    address: Address,
    edit: Callable[[StoredObject], Write],
    *,
    now: Expiry | None = None,
) -> tuple[Write, str | None]:
    """``edit`` of the file as it is now, written guarded by the version it had.

    MEMORY_NOT_FOUND when there is no file, else what ``edit`` raises; returns
    the write and its new version, None when the file changed in between.
    Storage that edits in place (SQLite) does it in one trip and transaction.
    """
    if not isinstance(storage, EditsInPlace):
        stored = await load_existing(storage, address, now=now)
        write = edit(stored)
        return write, await storage.put_if_version(write, stored.version)

    def existing(stored: StoredObject | None) -> Write:
        if live(stored, now) is None or stored is None:
            raise errors.memory_not_found_error(address.location)
        return edit(stored)

    return await storage.edit_in_place(address.key, existing)


async def load_version(
    storage: Storage, address: Address, version: str
) -> VersionRecord:
    # A version is a token no backend issues with '/': the same INVALID_ARGUMENT
    # a URL path (and so HTTP and the client) gives for one, on every surface.
    if not is_url_segment(version):
        raise errors.invalid_version_error(version)
    record = await storage.get_version(address.key, version)
    if record is None:
        raise errors.version_absent_error(address.location, version)
    return record


def require_version(address: Address, stored: StoredObject, expected: str) -> None:
    if stored.version != expected:
        raise conflict_with(address, stored)


def conflict_with(address: Address, stored: StoredObject) -> AppError:
    """VERSION_CONFLICT carrying the file as ``stored`` holds it now."""
    return errors.version_conflict_error(
        address.location, stored.data.decode(), stored.version
    )


async def raise_current_state(
    storage: Storage, address: Address, *, now: Expiry | None = None
) -> NoReturn:
    """After a failed precondition: the file is gone, or here is its new state."""
    raise conflict_with(address, await load_existing(storage, address, now=now))


async def create_new(
    storage: Storage, address: Address, write: Write, *, now: Expiry | None = None
) -> str:
    """``write`` created where no file is, else VERSION_CONFLICT with the file there.

    A create can lose to a file that another caller deletes before its state
    is read: that create is tried again, now after the delete, rather than
    answered "absent" (up to CREATE_ATTEMPTS writes). With ``now``, a file
    expired by then is no file: the create replaces it, guarded by its version.
    """
    expected: str | None = None
    for _ in range(CREATE_ATTEMPTS):
        version = await storage.put_if_version(write, expected)
        if version is not None:
            return version
        stored = await storage.get(address.key)
        if stored is not None and live(stored, now) is not None:
            raise conflict_with(address, stored)
        expected = None if stored is None else stored.version
    await raise_current_state(storage, address, now=now)


async def list_batches(
    storage: Storage, prefix: str, *, batch: int = LIST_BATCH
) -> AsyncIterator[Sequence[ListedObject]]:
    """Every object under ``prefix``, one ``list_page`` batch at a time, ascending.

    Not a snapshot: a batch resumes after the last key of the one before, so
    deleting what a batch listed does not skip anything.
    """
    start_after: str | None = None
    while True:
        page = await storage.list_page(prefix, start_after=start_after, limit=batch)
        if page:
            yield page
        if len(page) < batch:
            return
        start_after = page[-1].key


async def list_all(storage: Storage, prefix: str) -> list[ListedObject]:
    return [item async for batch in list_batches(storage, prefix) for item in batch]
