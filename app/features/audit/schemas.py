from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.features.memory.schemas import KeySegment, UtcMoment

Segment = Annotated[str, Field(max_length=256)]
OperationName = Annotated[str, Field(min_length=1, max_length=64)]
Cursor = Annotated[str, Field(max_length=512)]
PAGE_SIZE = 100
"""Events per page of GET /v1/audit and memory.audit."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AuditEventView(BaseModel):
    """One recorded call: who, when, through which surface, what it touched."""

    at: str = Field(description="When the call finished (UTC, ISO 8601).")
    request_id: str = Field(description="The call's correlation id.")
    surface: str = Field(description="http, mcp or task.")
    actor: str = Field(description="The token's label, else the surface.")
    token_id: str | None = Field(
        description="The token's public id (wenchang token list); null without one."
    )
    operation: str = Field(description="The operation called, e.g. read_file.")
    scope: str | None
    area: str | None
    name: str | None
    outcome: str = Field(description="ok, or the error code the call was refused with.")
    version: str | None = Field(description="The version read or written.")
    files: list[str] = Field(
        description="area/name of each file an index, list or search call returned."
    )
    files_omitted: int = Field(description="Returned files beyond the first 1,000.")


class AuditEvents(BaseModel):
    events: list[AuditEventView]
    next_cursor: str | None


class AuditFilters(Strict):
    since: UtcMoment | None = Field(
        default=None, description="Only events at or after this time."
    )
    until: UtcMoment | None = Field(
        default=None, description="Only events at or before this time."
    )
    operation: OperationName | None = Field(
        default=None, description="Only calls of this operation, e.g. write_file."
    )
    cursor: Cursor | None = Field(
        default=None, description="next_cursor of the previous page, same filters."
    )


class ReadAudit(AuditFilters):
    """A caller's question: who touched my memory, newest first."""

    scope: Segment | None = Field(
        default=None,
        description="One scope; omit for every scope where your role may audit.",
    )
    area: Segment | None = Field(default=None, description="Only events of this area.")
    name: Segment | None = Field(
        default=None, description="Only events naming this file (with area)."
    )


class AuditEntity(AuditFilters):
    """Operator input: the events of one entity of one scope."""

    scope: KeySegment
    entity_id: KeySegment
