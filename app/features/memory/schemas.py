from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from app.shared.locations import SEGMENT_RULE, is_valid_segment

MAX_CONTENT_CHARS = 1_048_576
"""Schema bound on any body; the configurable byte limit is enforced below it."""

Segment = Annotated[str, Field(max_length=256)]
Text = Annotated[str, Field(max_length=MAX_CONTENT_CHARS)]
OneLine = Annotated[str, Field(max_length=4096)]
Alias = Annotated[str, Field(max_length=512)]
Aliases = Annotated[list[Alias], Field(max_length=256)]
Version = Annotated[str, Field(max_length=256)]
Cursor = Annotated[str, Field(max_length=2048)]


def _within_utc(moment: datetime) -> datetime:
    # An offset can carry year 1 or 9999 past what UTC can write, and every
    # store keeps times in UTC: refuse it here, as any other bad time.
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("must fall between years 1 and 9999 in UTC") from None
    return moment


UtcMoment = Annotated[AwareDatetime, AfterValidator(_within_utc)]
"""A time with its offset that UTC can also write."""

ScopeArg = Annotated[
    Segment, Field(description="A scope of this session, e.g. user (see the index).")
]
AreaArg = Annotated[
    Segment,
    Field(description="Lowercase slug, e.g. preferences; system/ is read-only."),
]
NameArg = Annotated[Segment, Field(description="File name without .md.")]
ContentArg = Annotated[
    Text, Field(description="The whole body (markdown), within the per-file limit.")
]
DescriptionArg = Annotated[
    OneLine, Field(description="One line saying what the file holds.")
]
AliasesArg = Annotated[
    Aliases, Field(description="Other names a future session may look for.")
]
LineArg = Annotated[
    OneLine,
    Field(description="One fact line: - [stated|observed|inferred|system] text"),
]
SeenVersion = Annotated[
    Version, Field(description="The version you read; a conflict returns the current.")
]
CURSOR = "next_cursor of the previous page, with the same scope and area."
VERSIONS_CURSOR = "next_cursor of the previous page of this file's versions."
LISTED_AREA = "One area to list; omit to list the whole scope."
ADDED_ALIASES = "Aliases to add; existing ones are never removed."
NEW_DESCRIPTION = "A new one-line description; omit to keep the stored one."


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileEntry(BaseModel):
    scope: str
    area: str
    name: str
    version: str
    description: str
    aliases: list[str]
    sources: list[str]
    last_updated: str


class MemoryFile(BaseModel):
    scope: str
    area: str
    name: str
    content: str
    version: str
    description: str
    aliases: list[str]
    sources: list[str]
    last_updated: str


class CappedArea(BaseModel):
    scope: str
    area: str
    omitted: int


class MemoryIndex(BaseModel):
    entries: list[FileEntry]
    capped: list[CappedArea]


class IndexConditionHeaders(BaseModel):
    if_none_match: str | None = Field(
        default=None,
        max_length=4096,
        description="The ETag of an index the caller holds; 304 while it is current.",
    )


class FileListing(BaseModel):
    entries: list[FileEntry]
    next_cursor: str | None


class Deleted(BaseModel):
    ok: Literal[True] = True


class FileArgs(Strict):
    """The file an operation acts on, as an agent names it."""

    scope: ScopeArg
    area: AreaArg
    name: NameArg


class ReadFile(FileArgs): ...


class ListPrefix(Strict):
    scope: ScopeArg
    area: Segment | None = Field(default=None, description=LISTED_AREA)
    cursor: Cursor | None = Field(default=None, description=CURSOR)


class WriteFile(FileArgs):
    content: ContentArg
    description: DescriptionArg
    aliases: AliasesArg
    expected_version: Annotated[
        Version | None,
        Field(description="null creates the file; else the version you read."),
    ]


class AppendLine(FileArgs):
    line: LineArg
    expected_version: SeenVersion
    aliases: Aliases | None = Field(default=None, description=ADDED_ALIASES)
    description: OneLine | None = Field(default=None, description=NEW_DESCRIPTION)


class ReplaceFact(FileArgs):
    old_string: Annotated[
        Text, Field(description="Text that occurs exactly once in the file.")
    ]
    new_string: Annotated[
        Text, Field(description="Its replacement; empty removes the span.")
    ]
    expected_version: SeenVersion
    aliases: Aliases | None = Field(default=None, description=ADDED_ALIASES)
    description: OneLine | None = Field(default=None, description=NEW_DESCRIPTION)


class DeleteFile(FileArgs):
    expected_version: SeenVersion


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


class ScopePath(Strict):
    scope: Segment


class AreaPath(ScopePath):
    area: Segment


class FilePath(AreaPath):
    name: Segment


class VersionPath(FilePath):
    version: Version


class ListQuery(Strict):
    cursor: Cursor | None = None


class FileBody(Strict):
    content: ContentArg
    description: DescriptionArg
    aliases: Aliases


class LineBody(Strict):
    line: LineArg
    aliases: Aliases | None = Field(default=None, description=ADDED_ALIASES)
    description: OneLine | None = Field(default=None, description=NEW_DESCRIPTION)


class ReplaceBody(Strict):
    old_string: Text
    new_string: Text
    aliases: Aliases | None = None
    description: OneLine | None = None


ETAG_PATTERN = r'^"[\x21\x23-\x7e]{1,256}"$'


IdempotencyKey = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$",
        description=(
            "Optional. A retry with the same key and request returns the first "
            "response instead of applying again (kept for 10 minutes, per token)."
        ),
    ),
]


class MatchHeaders(BaseModel):
    if_match: str | None = Field(default=None, pattern=ETAG_PATTERN)
    if_none_match: str | None = Field(default=None, max_length=256)
    idempotency_key: IdempotencyKey | None = None


class CreateOrMatchHeaders(BaseModel):
    if_match: str | None = Field(default=None, pattern=ETAG_PATTERN)
    if_none_match: Literal["*"] | None = None
    idempotency_key: IdempotencyKey | None = None


class VersionHeaders(BaseModel):
    etag: str = Field(alias="ETag")


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
