"""What a caller sees of a stored object: a ``MemoryFile`` or a listing row."""

from typing import TypedDict

from app.shared.locations import Location

from ..ports import FileMetadata, ListedObject, StoredObject
from ..schemas import FileEntry, MemoryFile
from .keys import split_key
from .timestamps import format_timestamp

# Models are built by their validators from one dict: a keyword call through
# ``BaseModel.__init__`` costs about twice as much, once per file or entry.
_FILE = MemoryFile.__pydantic_validator__
_ENTRY = FileEntry.__pydantic_validator__


def render_file(
    location: Location, data: bytes, meta: FileMetadata, version: str
) -> MemoryFile:
    file: MemoryFile = _FILE.validate_python(
        {
            "scope": location.scope,
            "area": location.area,
            "name": location.name,
            "content": data.decode(),
            "version": version,
            "description": meta.description,
            "aliases": meta.aliases,
            "sources": meta.sources,
            "last_updated": format_timestamp(meta.last_updated),
        }
    )
    return file


def render_stored(location: Location, stored: StoredObject) -> MemoryFile:
    return render_file(location, stored.data, stored.metadata, stored.version)


class ListedFields(TypedDict):
    """What every listing row says of a file: where it is, its version, metadata."""

    scope: str
    area: str
    name: str
    version: str
    description: str
    aliases: list[str]
    last_updated: str


def listed_fields(key: str, version: str, meta: FileMetadata) -> ListedFields | None:
    """The row fields of the file at ``key``; None when the key names no file."""
    parts = split_key(key)
    if parts is None:
        return None
    return ListedFields(
        scope=parts[0],
        area=parts[1],
        name=parts[2],
        version=version,
        description=meta.description,
        aliases=list(meta.aliases),
        last_updated=format_timestamp(meta.last_updated),
    )


def render_entry(listed: ListedObject) -> FileEntry | None:
    fields = listed_fields(listed.key, listed.version, listed.metadata)
    if fields is None:
        return None
    entry: FileEntry = _ENTRY.validate_python(
        {**fields, "sources": listed.metadata.sources}
    )
    return entry
