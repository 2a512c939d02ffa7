"""What a caller sees of a stored object: a ``MemoryFile`` or a listing row."""

from app.shared.locations import Location

from ..ports import FileMetadata, ListedObject, StoredObject, VersionRecord
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


def render_record(location: Location, record: VersionRecord) -> MemoryFile:
    """The file as a version record (read with its data) stored it."""
    data = record.data or b""
    return render_file(location, data, record.metadata, record.version)


def render_entry(listed: ListedObject) -> FileEntry | None:
    """The listing row of the file at ``listed.key``; None when it names no file."""
    parts = split_key(listed.key)
    if parts is None:
        return None
    meta = listed.metadata
    entry: FileEntry = _ENTRY.validate_python(
        {
            "scope": parts[0],
            "area": parts[1],
            "name": parts[2],
            "version": listed.version,
            "description": meta.description,
            "aliases": meta.aliases,
            "sources": meta.sources,
            "last_updated": format_timestamp(meta.last_updated),
        }
    )
    return entry
