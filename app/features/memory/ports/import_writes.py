"""How an import writes a checked file: its history replayed, then its body."""

from dataclasses import dataclass

from ..domain import Address
from . import Change, FileMetadata, Storage, Write
from .storage_reads import raise_current_state

ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Record:
    """One version record to replay: its change and the file it left."""

    change: Change
    data: bytes
    metadata: FileMetadata
    deleted: bool


@dataclass(frozen=True, slots=True)
class Restore:
    """One checked file of an import, with its records oldest first."""

    address: Address
    data: bytes
    metadata: FileMetadata
    history: tuple[Record, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.address.location.area}/{self.address.location.name}"


async def write_restore(
    storage: Storage, restore: Restore, change: Change, *, overwrite: bool
) -> str:
    """ "created", "overwritten" or "skipped"; each write guarded by the version
    just read."""
    key, data, metadata = restore.address.key, restore.data, restore.metadata
    for _ in range(ATTEMPTS):
        current = await storage.get(key)
        if current is not None and not overwrite:
            return "skipped"
        expected = None if current is None else current.version
        if current is None and restore.history:
            expected = await replay(storage, restore)
            last = restore.history[-1]
            if (last.data, last.metadata, last.deleted) == (data, metadata, False):
                return "created"
        written = await storage.put_if_version(
            Write(key, data, metadata, change=change), expected
        )
        if written is not None:
            return "created" if current is None else "overwritten"
    await raise_current_state(storage, restore.address)


async def replay(storage: Storage, restore: Restore) -> str | None:
    """Write the records again, oldest first; the version the last one left."""
    key, version = restore.address.key, None
    for record in restore.history:
        if record.deleted:
            if version is not None:
                await storage.delete_if_version(key, version, change=record.change)
            version = None
            continue
        version = await storage.put_if_version(
            Write(key, record.data, record.metadata, change=record.change), version
        )
        if version is None:
            await raise_current_state(storage, restore.address)
    return version
