"""Version records as callers see them: entries, and records with their file."""

from app.shared.locations import Location

from ..ports import VersionRecord
from ..schemas import FileVersion, VersionEntry
from .timestamps import format_timestamp
from .views import render_record

VERSIONS_LISTING = "versions"
"""Tags a version cursor, so no other listing's cursor is accepted for it."""


def render_version(record: VersionRecord) -> VersionEntry:
    return VersionEntry(
        version=record.version,
        operation=record.operation,
        actor=record.actor,
        at=format_timestamp(record.metadata.last_updated),
        size=record.size,
        deleted=record.deleted,
    )


def render_file_version(location: Location, record: VersionRecord) -> FileVersion:
    file = render_record(location, record)
    return FileVersion(**render_version(record).model_dump(), file=file)


def versions_listing(key: str) -> str:
    """What a version cursor is bound to: this file's history, and nothing else."""
    return f"{VERSIONS_LISTING}\0{key}"
