"""Reads and guarded writes through the Storage port that every operation shares.

A file read that must exist (else MEMORY_NOT_FOUND), a version record that
must exist (else MEMORY_NOT_FOUND, version_absent), a version check and the
current state after a failed precondition (VERSION_CONFLICT with what is there
now), listings of a whole prefix in ``list_page`` batches, and the guarded
create, edit and delete of one file, each answering a keyed call's own landed
change (``own_writes``) where it would refuse it.
"""

from collections.abc import AsyncIterator, Callable, Sequence
from typing import NoReturn

from tenchi.errors import AppError

from app.shared import errors
from app.shared.locations import is_url_segment

from ..domain.expiry import Expiry
from ..domain.keys import Address
from . import (
    Change,
    EditsInPlace,
    ListedObject,
    Storage,
    StoredObject,
    VersionRecord,
    Write,
)
from .own_writes import SUPERSEDED, as_file, own_write, recognising_own_write
from .quota import require_room

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
    call: str = "",
    now: Expiry | None = None,
) -> StoredObject:
    """``edit`` of the file as it is now, written guarded by the version it had.

    MEMORY_NOT_FOUND when there is no file, else what ``edit`` raises; a lost
    race is VERSION_CONFLICT with the file as it is now, unless it holds exactly
    what ``edit`` wrote. The keyed call ``call`` refused over its own landed
    change answers that change. With ``now`` an expired file is none. Returns
    the file as the edit left it.
    """

    async def attempt() -> StoredObject:
        write, version = await _edited(storage, address, edit, now)
        if version is not None:
            return StoredObject(write.data, write.metadata, version)
        current = await load_existing(storage, address, now=now)
        if current.data != write.data or current.metadata != write.metadata:
            raise conflict_with(address, current)
        return current

    return await recognising_own_write(storage, address, call, attempt, as_file)


async def try_edit(
    storage: Storage,
    address: Address,
    edit: Callable[[StoredObject], Write],
    *,
    call: str = "",
    now: Expiry | None = None,
) -> StoredObject | None:
    """``edit_existing``, but None when the write lost a race (to edit again).

    A keyed call beaten by, or refused over, its own landed change answers it.
    """
    try:
        write, version = await _edited(storage, address, edit, now)
    except AppError as error:
        if error.code not in SUPERSEDED:
            raise
        own = await own_write(storage, address, call)
        if own is None:
            raise
        return as_file(own)
    if version is not None:
        return StoredObject(write.data, write.metadata, version)
    own = await own_write(storage, address, call)
    return None if own is None else as_file(own)


async def _edited(
    storage: Storage,
    address: Address,
    edit: Callable[[StoredObject], Write],
    now: Expiry | None,
) -> tuple[Write, str | None]:
    """The write and its new version, None when the file changed in between.

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
    storage: Storage,
    address: Address,
    write: Write,
    *,
    cap: int = 0,
    now: Expiry | None = None,
) -> StoredObject:
    """``write`` created where no file is, else VERSION_CONFLICT with the file there.

    Only with room under the entity's ``cap`` (``quota.require_room``). A
    create can lose to a file that another caller deletes before its state is
    read: that create is tried again, now after the delete, rather than
    answered "absent" (up to CREATE_ATTEMPTS writes). With ``now``, a file
    expired by then is no file: the create replaces it, guarded by its version.
    A keyed call refused over its own landed create answers it.
    """

    async def attempt() -> StoredObject:
        await require_room(storage, address, cap)
        expected: str | None = None
        for _ in range(CREATE_ATTEMPTS):
            version = await storage.put_if_version(write, expected)
            if version is not None:
                return StoredObject(write.data, write.metadata, version)
            stored = await storage.get(address.key)
            if stored is not None and live(stored, now) is not None:
                raise conflict_with(address, stored)
            expected = None if stored is None else stored.version
        await raise_current_state(storage, address, now=now)

    call = write.change.call if write.change else ""
    return await recognising_own_write(storage, address, call, attempt, as_file)


async def delete_existing(
    storage: Storage,
    address: Address,
    expected: str,
    change: Change,
    *,
    now: Expiry | None = None,
) -> None:
    """The file deleted, guarded by the ``expected`` version.

    MEMORY_NOT_FOUND when there is none, VERSION_CONFLICT with the file as it
    is now when it moved on; a keyed call refused over its own landed delete
    answers it (only a tombstone is a delete's own change).
    """

    async def attempt() -> bool:
        stored = await load_existing(storage, address, now=now)
        require_version(address, stored, expected)
        if not await storage.delete_if_version(address.key, expected, change=change):
            await raise_current_state(storage, address, now=now)
        return True

    def own(record: VersionRecord) -> bool | None:
        return True if record.deleted else None

    await recognising_own_write(storage, address, change.call, attempt, own)


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
