"""What the change feed takes and answers: a scope, a cursor, a page of changes."""

from pydantic import BaseModel, Field

from app.features.memory.schemas import Cursor, Segment, Strict

CHANGES_SCOPE = "The scope whose changes (of the caller's own entity) to read."
CHANGES_AFTER = (
    "A change's cursor (or next_cursor): only changes after it; omit to start "
    "from the oldest change kept."
)
CHANGES_PAGE = 100


class ReadChanges(Strict):
    scope: Segment = Field(description=CHANGES_SCOPE)
    after: Cursor | None = Field(default=None, description=CHANGES_AFTER)


class FileChange(BaseModel):
    """One landed mutation of one file; never its content."""

    cursor: str
    at: str
    operation: str
    scope: str
    area: str
    name: str
    version: str
    actor: str


class ChangesPage(BaseModel):
    changes: list[FileChange]
    next_cursor: str
    """Pass as ``after`` to read on (the same cursor when nothing was new)."""
