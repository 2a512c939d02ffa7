"""What the history operations take and answer: versions of one file."""

from typing import Annotated

from pydantic import BaseModel, Field

from .fields import (
    VERSIONS_CURSOR,
    Cursor,
    Strict,
    Version,
)
from .files import FileArgs, MemoryFile


class VersionEntry(BaseModel):
    """One version record of a file, without its content."""

    version: str
    operation: str
    actor: str
    at: str
    size: int
    deleted: bool


class VersionListing(BaseModel):
    entries: list[VersionEntry]
    next_cursor: str | None


class FileVersion(VersionEntry):
    """One version record with the file object as it stood (no content for a
    tombstone: ``file.content`` is empty and ``deleted`` is true)."""

    file: MemoryFile


class ListVersions(FileArgs):
    cursor: Cursor | None = Field(default=None, description=VERSIONS_CURSOR)


class ReadVersion(FileArgs):
    version: Annotated[Version, Field(description="A version from list_versions.")]


class RestoreVersion(FileArgs):
    version: Annotated[
        Version, Field(description="The version to bring back (from list_versions).")
    ]
    expected_version: Annotated[
        Version | None,
        Field(
            description=(
                "The file's current version; null when the file is deleted now."
            )
        ),
    ]


class RestoreBody(Strict):
    version: Annotated[Version, Field(description="The version to bring back.")]
