"""What the operator tasks take and answer: export, import, purge, invalidation."""

from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from app.shared.locations import SEGMENT_RULE, is_valid_segment

from .fields import (
    Aliases,
    OneLine,
    Segment,
    Strict,
    Text,
    UtcMoment,
    Version,
)


def _key_segment(value: str) -> str:
    if not is_valid_segment(value):
        raise ValueError(SEGMENT_RULE)
    return value


KeySegment = Annotated[str, Field(max_length=256), AfterValidator(_key_segment)]
MAX_EXPORT_FILES = 100_000
Source = Annotated[str, Field(min_length=1, max_length=256)]


class EntityPrefix(Strict):
    """Operator input: one entity of one scope, named directly (no identity)."""

    scope: KeySegment
    entity_id: KeySegment


class ExportedFile(BaseModel):
    area: str
    name: str
    content: str
    description: str
    aliases: list[str]
    sources: list[str]
    last_updated: str
    version: str
    expires_at: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """Only on a file that expires: an export without any reads as before."""


class ExportMemory(EntityPrefix):
    include_history: bool = Field(
        default=False, description="Also export each file's version records."
    )


class ExportedRecord(Strict):
    """One version record, with the file as it stood (no content: a tombstone)."""

    version: Version
    operation: Annotated[str, Field(min_length=1, max_length=64)]
    actor: Source
    at: UtcMoment
    deleted: bool = False
    content: Text = ""
    description: OneLine = ""
    aliases: Aliases = Field(default_factory=list[str])
    sources: Annotated[list[Source], Field(max_length=256)] = Field(
        default_factory=list[str]
    )


class FileHistory(Strict):
    """A file's version records, newest first, as list_versions orders them."""

    area: Segment
    name: Segment
    records: Annotated[list[ExportedRecord], Field(max_length=100_000)]


class MemoryExport(BaseModel):
    scope: str
    entity_id: str
    files: list[ExportedFile]
    history: list[FileHistory] | None = None


class ImportedFile(Strict):
    """One file to restore; absent metadata defaults as a fresh write would."""

    area: Segment
    name: Segment
    content: Text
    description: OneLine = ""
    aliases: Aliases = Field(default_factory=list[str])
    sources: Annotated[list[Source], Field(max_length=256)] = Field(
        default_factory=list[str]
    )
    last_updated: UtcMoment | None = None
    version: Version | None = None
    """Ignored: an import always creates new versions."""
    expires_at: UtcMoment | None = None
    """Restored as given: an expired file stays expired."""


class ImportMode(StrEnum):
    SKIP = "skip"
    OVERWRITE = "overwrite"
    FAIL = "fail"


class ImportMemory(EntityPrefix):
    files: Annotated[list[ImportedFile], Field(max_length=MAX_EXPORT_FILES)]
    mode: ImportMode = ImportMode.FAIL
    history: Annotated[list[FileHistory] | None, Field(max_length=MAX_EXPORT_FILES)] = (
        None
    )
    """Version records to replay (oldest first) before a file this import creates."""


class FileName(BaseModel):
    area: str
    name: str


class ImportReport(BaseModel):
    scope: str
    entity_id: str
    mode: ImportMode
    created: list[FileName]
    overwritten: list[FileName]
    skipped: list[FileName]


class PurgeMemory(EntityPrefix):
    dry_run: bool = True


class PurgeReport(BaseModel):
    scope: str
    entity_id: str
    dry_run: bool
    objects: int
    """Objects deleted (or, on a dry run, that would be deleted)."""
    files: list[FileName]
    passes: int


class IndexInvalidated(BaseModel):
    scope: str
    entity_id: str
