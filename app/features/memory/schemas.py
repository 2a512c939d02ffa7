from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_CONTENT_CHARS = 1_048_576
"""Schema bound on any body; the configurable byte limit is enforced below it."""

Segment = Annotated[str, Field(max_length=256)]
Text = Annotated[str, Field(max_length=MAX_CONTENT_CHARS)]
OneLine = Annotated[str, Field(max_length=4096)]
Alias = Annotated[str, Field(max_length=512)]
Aliases = Annotated[list[Alias], Field(max_length=256)]
Version = Annotated[str, Field(max_length=256)]
Cursor = Annotated[str, Field(max_length=2048)]


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


class FileListing(BaseModel):
    entries: list[FileEntry]
    next_cursor: str | None


class Deleted(BaseModel):
    ok: Literal[True] = True


class ReadFile(Strict):
    scope: Segment
    area: Segment
    name: Segment


class ListPrefix(Strict):
    scope: Segment
    area: Segment | None = None
    cursor: Cursor | None = None


class WriteFile(Strict):
    scope: Segment
    area: Segment
    name: Segment
    content: Text
    description: OneLine
    aliases: Aliases
    expected_version: Version | None


class AppendLine(Strict):
    scope: Segment
    area: Segment
    name: Segment
    line: OneLine
    expected_version: Version
    aliases: Aliases | None = None
    description: OneLine | None = None


class ReplaceFact(Strict):
    scope: Segment
    area: Segment
    name: Segment
    old_string: Text
    new_string: Text
    expected_version: Version
    aliases: Aliases | None = None
    description: OneLine | None = None


class DeleteFile(Strict):
    scope: Segment
    area: Segment
    name: Segment
    expected_version: Version


class FilePath(Strict):
    scope: Segment
    area: Segment
    name: Segment


class ScopePath(Strict):
    scope: Segment


class AreaPath(Strict):
    scope: Segment
    area: Segment


class ListQuery(Strict):
    cursor: Cursor | None = None


class FileBody(Strict):
    content: Text
    description: OneLine
    aliases: Aliases


class LineBody(Strict):
    line: OneLine
    aliases: Aliases | None = None
    description: OneLine | None = None


class ReplaceBody(Strict):
    old_string: Text
    new_string: Text
    aliases: Aliases | None = None
    description: OneLine | None = None


ETAG_PATTERN = r'^"[\x21\x23-\x7e]{1,256}"$'


class MatchHeaders(BaseModel):
    if_match: str | None = Field(default=None, pattern=ETAG_PATTERN)
    if_none_match: str | None = Field(default=None, max_length=256)


class CreateOrMatchHeaders(BaseModel):
    if_match: str | None = Field(default=None, pattern=ETAG_PATTERN)
    if_none_match: Literal["*"] | None = None


class VersionHeaders(BaseModel):
    etag: str = Field(alias="ETag")


@dataclass(frozen=True, slots=True)
class PutOutcome:
    file: MemoryFile
    created: bool
