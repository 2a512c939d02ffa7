"""What a caller sees of a stored object: a ``MemoryFile`` or a listing row."""

from collections.abc import Sequence
from typing import NotRequired, TypedDict

from app.shared.locations import Location

from ..ports import FileMetadata, ListedObject, StoredObject, VersionRecord
from ..schemas import FileEntry, MemoryFile
from .expiry import Expiry
from .keys import split_key
from .timestamps import format_timestamp


def render_file(
    location: Location,
    data: bytes,
    meta: FileMetadata,
    version: str,
    updated_text: str | None = None,
) -> MemoryFile:
    """The file as shown; ``updated_text`` is ``meta.last_updated`` already shown."""
    # Built from one dict: a keyword call through ``BaseModel.__init__`` costs
    # about twice as much, once per file or entry.
    values = {
        "scope": location.scope,
        "area": location.area,
        "name": location.name,
        "content": data.decode(),
        "version": version,
        "description": meta.description,
        "aliases": meta.aliases,
        "sources": meta.sources,
        "last_updated": updated_text or format_timestamp(meta.last_updated),
    }
    if meta.expires_at is not None:
        values["expires_at"] = format_timestamp(meta.expires_at)
    return MemoryFile.model_validate(values)


def render_stored(location: Location, stored: StoredObject) -> MemoryFile:
    return render_file(
        location, stored.data, stored.metadata, stored.version, stored.updated_text
    )


def render_record(location: Location, record: VersionRecord) -> MemoryFile:
    """The file as a version record (read with its data) stored it."""
    data = record.data or b""
    return render_file(location, data, record.metadata, record.version)


class EntryRow(TypedDict):
    """A ``FileEntry``'s fields, in its order, before any model is built."""

    scope: str
    area: str
    name: str
    version: str
    description: str
    aliases: tuple[str, ...]
    sources: tuple[str, ...]
    last_updated: str
    expires_at: NotRequired[str]


def _strings(values: Sequence[str]) -> tuple[str, ...]:
    # The port promises tuples; a list would serialise the same after a warning.
    return values if isinstance(values, tuple) else tuple(values)


def entry_row(parts: tuple[str, str, str], listed: ListedObject) -> EntryRow:
    """The listing row's fields of the file at ``parts`` (its split key)."""
    meta = listed.metadata
    row: EntryRow = {
        "scope": parts[0],
        "area": parts[1],
        "name": parts[2],
        "version": listed.version,
        "description": meta.description,
        "aliases": _strings(meta.aliases),
        "sources": _strings(meta.sources),
        "last_updated": listed.updated_text,
    }
    if meta.expires_at is not None:
        row["expires_at"] = format_timestamp(meta.expires_at)
    return row


def render_entry(listed: ListedObject) -> FileEntry | None:
    """The listing row of the file at ``listed.key``; None when it names no file."""
    parts = split_key(listed.key)
    if parts is None:
        return None
    return FileEntry.model_validate(entry_row(parts, listed))


def render_entries(
    listed: Sequence[ListedObject], hide: Expiry | None
) -> list[FileEntry]:
    """The listing rows of ``listed``, without the files ``hide`` finds expired."""
    shown = (
        listed if hide is None else [i for i in listed if not hide.expired(i.metadata)]
    )
    return [entry for entry in map(render_entry, shown) if entry is not None]
