"""The bounded field types and argument descriptions every memory model shares."""

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

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

ScopeArg = Annotated[Segment, Field(description="A scope from the index, e.g. user.")]
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


ExpiresAtArg = Annotated[
    UtcMoment | None,
    Field(description="When the file expires; null: never. Omit to keep it."),
]
TtlSecondsArg = Annotated[
    int | None,
    Field(ge=1, le=3_153_600_000, description="Expire this many seconds from now."),
]
INCLUDE_EXPIRED = "Also show expired files (scope owners only)."
