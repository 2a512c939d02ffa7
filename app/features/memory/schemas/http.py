"""What HTTP adds around an operation: path parameters, bodies and headers."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from .fields import (
    ADDED_ALIASES,
    NEW_DESCRIPTION,
    Aliases,
    ContentArg,
    Cursor,
    DescriptionArg,
    ExpiresAtArg,
    LineArg,
    OneLine,
    Segment,
    Strict,
    Text,
    TtlSecondsArg,
    Version,
)


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


class FilesQuery(ListQuery):
    include_expired: bool = False


class ReadQuery(Strict):
    include_expired: bool = False


class FileBody(Strict):
    content: ContentArg
    description: DescriptionArg
    aliases: Aliases
    expires_at: ExpiresAtArg = None
    ttl_seconds: TtlSecondsArg = None


class LineBody(Strict):
    line: LineArg
    aliases: Aliases | None = Field(default=None, description=ADDED_ALIASES)
    description: OneLine | None = Field(default=None, description=NEW_DESCRIPTION)


class ReplaceBody(Strict):
    old_string: Text
    new_string: Text
    aliases: Aliases | None = None
    description: OneLine | None = None


class RenameBody(Strict):
    """Where the file moves to; the path names it where it is now."""

    new_area: Segment = Field(alias="area")
    new_name: Segment = Field(alias="name")


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


class IndexConditionHeaders(BaseModel):
    if_none_match: str | None = Field(
        default=None,
        max_length=4096,
        description="The ETag of an index the caller holds; 304 while it is current.",
    )
