"""What a file operation takes and answers: its arguments, a file, a listing."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from .fields import (
    ADDED_ALIASES,
    CURSOR,
    INCLUDE_EXPIRED,
    LISTED_AREA,
    NEW_DESCRIPTION,
    Aliases,
    AliasesArg,
    AreaArg,
    ContentArg,
    Cursor,
    DescriptionArg,
    ExpiresAtArg,
    LineArg,
    NameArg,
    OneLine,
    ScopeArg,
    SeenVersion,
    Segment,
    Strict,
    Text,
    TtlSecondsArg,
    Version,
)


def _absent(value: object) -> bool:
    # Shown only on a file that expires: a file that never does reads as before.
    return value is None


class FileEntry(BaseModel):
    scope: str
    area: str
    name: str
    version: str
    description: str
    aliases: list[str]
    sources: list[str]
    last_updated: str
    expires_at: str | None = Field(default=None, exclude_if=_absent)


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
    expires_at: str | None = Field(default=None, exclude_if=_absent)


class CappedArea(BaseModel):
    scope: str
    area: str
    omitted: int


class MemoryIndex(BaseModel):
    entries: list[FileEntry]
    capped: list[CappedArea]


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


class ReadFile(FileArgs):
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED)


class GetMemoryIndex(Strict):
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED)


class ListPrefix(Strict):
    scope: ScopeArg
    area: Segment | None = Field(default=None, description=LISTED_AREA)
    cursor: Cursor | None = Field(default=None, description=CURSOR)
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED)


class WriteFile(FileArgs):
    content: ContentArg
    description: DescriptionArg
    aliases: AliasesArg
    expected_version: Annotated[
        Version | None,
        Field(description="null creates the file; else the version you read."),
    ]
    expires_at: ExpiresAtArg = None
    ttl_seconds: TtlSecondsArg = None


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


class RenameFile(FileArgs):
    new_area: Annotated[Segment, Field(description="Area to move it to.")]
    new_name: Annotated[Segment, Field(description="Its name there.")]
    expected_version: SeenVersion
