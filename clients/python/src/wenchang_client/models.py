"""The results the client returns: its own pydantic models of the API's answers.

They mirror the published OpenAPI document (a test compares field names, types
and required fields) and ignore fields a newer server may add.
"""

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AuditEvent",
    "AuditEvents",
    "CappedArea",
    "Deleted",
    "FileEntry",
    "FileListing",
    "FileVersion",
    "MemoryFile",
    "MemoryIndex",
    "MemoryToolAnswer",
    "SearchHit",
    "SearchResults",
    "VersionEntry",
    "VersionListing",
]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=False)


class FileEntry(_Answer):
    """A file's metadata: an index or listing entry."""

    scope: str
    area: str
    name: str
    version: str
    description: str
    aliases: list[str]
    sources: list[str]
    last_updated: str
    expires_at: str | None = None
    """When the file expires (UTC); absent on a file that never does."""


class MemoryFile(_Answer):
    """A file with its content and opaque ``version``."""

    scope: str
    area: str
    name: str
    content: str
    version: str
    description: str
    aliases: list[str]
    sources: list[str]
    last_updated: str
    expires_at: str | None = None
    """When the file expires (UTC); absent on a file that never does."""


class CappedArea(_Answer):
    scope: str
    area: str
    omitted: int


class MemoryIndex(_Answer):
    """Every file's metadata; ``capped`` counts what the byte budget left out."""

    entries: list[FileEntry]
    capped: list[CappedArea]


class FileListing(_Answer):
    entries: list[FileEntry]
    next_cursor: str | None


class SearchHit(_Answer):
    scope: str
    area: str
    name: str
    description: str
    aliases: list[str]
    version: str
    last_updated: str
    score: float
    snippet: str


class SearchResults(_Answer):
    hits: list[SearchHit]
    next_cursor: str | None


class FileChange(_Answer):
    cursor: str
    at: str
    operation: str
    scope: str
    area: str
    name: str
    version: str
    actor: str


class ChangesPage(_Answer):
    changes: list[FileChange]
    next_cursor: str


class VersionEntry(_Answer):
    version: str
    operation: str
    actor: str
    at: str
    size: int
    deleted: bool


class VersionListing(_Answer):
    entries: list[VersionEntry]
    next_cursor: str | None


class FileVersion(_Answer):
    """One version record with the file as it stood (empty content if deleted)."""

    version: str
    operation: str
    actor: str
    at: str
    size: int
    deleted: bool
    file: MemoryFile


class AuditEvent(_Answer):
    at: str
    request_id: str
    surface: str
    actor: str
    token_id: str | None
    operation: str
    scope: str | None
    area: str | None
    name: str | None
    outcome: str
    version: str | None
    files: list[str]
    files_omitted: int


class AuditEvents(_Answer):
    events: list[AuditEvent]
    next_cursor: str | None


class WebhookDelivery(_Answer):
    """Where an endpoint's deliveries stand: ``active``, ``retrying``, ``failed``."""

    status: str
    attempts: int
    next_attempt_at: str | None
    last_error: str
    last_delivered_at: str | None
    failed_at: str | None
    skipped_at: str | None
    """When changes due were last found no longer kept and skipped (never delivered)."""


class Webhook(_Answer):
    id: str
    url: str
    description: str
    created_at: str
    delivery: WebhookDelivery


class WebhookCreated(_Answer):
    """A new endpoint; ``secret`` (``whsec_…``) is shown only here."""

    id: str
    url: str
    description: str
    secret: str
    created_at: str


class Webhooks(_Answer):
    webhooks: list[Webhook]


class Deleted(_Answer):
    ok: bool = True


class MemoryToolAnswer(_Answer):
    """A memory tool command's text: ``result`` on success, else ``error``."""

    result: str | None = None
    error: str | None = None
