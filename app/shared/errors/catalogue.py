"""Error categories with their advice, and each memory error's name and category."""

from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    RECOVERABLE = "recoverable"
    PERMANENT = "permanent"
    TRANSIENT = "transient"
    INTERNAL = "internal"


GUIDANCE: dict[Category, str] = {
    Category.RECOVERABLE: (
        "This is normal coordination, not an error the user needs to know about. "
        "Use the details above to correct the call and retry in the same turn, "
        "without asking the user."
    ),
    Category.PERMANENT: "Do not retry: retrying will not succeed.",
    Category.TRANSIENT: (
        "Retrying is appropriate. Version-guarded calls are safe to retry: an "
        "attempt that already landed comes back as a version conflict, though a "
        "retry with the same Idempotency-Key may get that attempt's result instead."
    ),
    Category.INTERNAL: "An unexpected failure occurred; it has been logged.",
}


@dataclass(frozen=True, slots=True)
class Kind:
    """How an error reads in ``details``: its name and category."""

    error: str
    category: Category


KINDS: dict[str, Kind] = {
    "VERSION_CONFLICT": Kind("VersionConflictError", Category.RECOVERABLE),
    "OVERSIZE_WRITE": Kind("OversizeWriteError", Category.RECOVERABLE),
    "FILE_QUOTA_EXCEEDED": Kind("FileQuotaExceededError", Category.RECOVERABLE),
    "REPLACE_FACT_MATCH": Kind("ReplaceFactMatchError", Category.RECOVERABLE),
    "INVALID_ARGUMENT": Kind("InvalidArgumentError", Category.RECOVERABLE),
    "MEMORY_NOT_FOUND": Kind("NotFoundError", Category.RECOVERABLE),
    "PRECONDITION_REQUIRED": Kind("PreconditionRequiredError", Category.RECOVERABLE),
    "CURSOR_EXPIRED": Kind("CursorExpiredError", Category.RECOVERABLE),
    "RESTRICTED_SCOPE": Kind("RestrictedScopeError", Category.PERMANENT),
    "UNAUTHORIZED": Kind("ResolverFailureError", Category.PERMANENT),
    "IMPORT_CONFLICT": Kind("ImportConflictError", Category.PERMANENT),
    "AUDIT_UNAVAILABLE": Kind("AuditUnavailableError", Category.PERMANENT),
    "BACKEND_UNAVAILABLE": Kind("BackendUnavailableError", Category.TRANSIENT),
    "PURGE_INCOMPLETE": Kind("PurgeIncompleteError", Category.TRANSIENT),
}
"""Each memory error code's name and category (the client has a class of each name)."""
