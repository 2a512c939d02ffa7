"""What an export document holds of a stored file and of each of its versions."""

from ..ports import StoredObject, VersionRecord
from ..schemas import ExportedFile, ExportedRecord
from .front_matter import render
from .timestamps import format_timestamp


def exported_file(area: str, name: str, stored: StoredObject) -> ExportedFile:
    meta = stored.metadata
    expires = meta.expires_at
    return ExportedFile(
        area=area,
        name=name,
        content=stored.data.decode(),
        description=meta.description,
        aliases=list(meta.aliases),
        sources=list(meta.sources),
        last_updated=format_timestamp(meta.last_updated),
        version=stored.version,
        expires_at=None if expires is None else format_timestamp(expires),
    )


def exported_record(record: VersionRecord) -> ExportedRecord:
    """A version record with its content (empty for a delete's record)."""
    meta = record.metadata
    return ExportedRecord(
        version=record.version,
        operation=record.operation,
        actor=record.actor,
        at=meta.last_updated,
        deleted=record.deleted,
        content=(record.data or b"").decode(),
        description=meta.description,
        aliases=list(meta.aliases),
        sources=list(meta.sources),
    )


def markdown_file(stored: StoredObject) -> bytes:
    """The file as ``memory.export_markdown`` writes it: front matter (the
    metadata and version, ``expires_at`` only when set), then the content."""
    meta = stored.metadata
    fields: dict[str, object] = {
        "description": meta.description,
        "aliases": list(meta.aliases),
        "sources": list(meta.sources),
        "last_updated": format_timestamp(meta.last_updated),
    }
    if meta.expires_at is not None:
        fields["expires_at"] = format_timestamp(meta.expires_at)
    fields["version"] = stored.version
    return render(fields, stored.data)
