"""Every caller-visible Wenchang error: its definition, category and payload.

Each memory error is one ``ErrorDef`` (the HTTP status and envelope code) plus a
builder that renders the error payload into ``details``: ``error``,
``category``, ``message``, the location when it parses, and the error's extra
fields. HTTP, MCP and the typed client all read the same payload, so an agent
can recover from any of them without another call. Messages never carry an
entity id or a storage path.
"""

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any

from tenchi.errors import AppError, ErrorDef

from .locations import Location


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
        "Retrying is appropriate. Version-guarded calls are safe to retry because "
        "an attempt that already landed comes back as a version conflict on retry."
    ),
    Category.INTERNAL: "An unexpected failure occurred; it has been logged.",
}


version_conflict = ErrorDef(
    code="VERSION_CONFLICT",
    status=412,
    message="The file changed since it was read.",
    headers=("ETag",),
)
oversize_write = ErrorDef(
    code="OVERSIZE_WRITE", status=413, message="The write is over the size limit."
)
file_quota_exceeded = ErrorDef(
    code="FILE_QUOTA_EXCEEDED", status=409, message="The entity is at its file cap."
)
replace_fact_match = ErrorDef(
    code="REPLACE_FACT_MATCH",
    status=409,
    message="old_string did not match exactly one span.",
)
invalid_argument = ErrorDef(
    code="INVALID_ARGUMENT", status=422, message="An argument is invalid."
)
memory_not_found = ErrorDef(
    code="MEMORY_NOT_FOUND", status=404, message="No memory file exists there."
)
restricted_scope = ErrorDef(
    code="RESTRICTED_SCOPE", status=403, message="The caller may not write there."
)
unauthorized = ErrorDef(
    code="UNAUTHORIZED",
    status=401,
    message="Identity could not be resolved.",
    headers=("WWW-Authenticate",),
)
backend_unavailable = ErrorDef(
    code="BACKEND_UNAVAILABLE",
    status=503,
    message="The storage backend is unavailable.",
    headers=("Retry-After",),
)
precondition_required = ErrorDef(
    code="PRECONDITION_REQUIRED",
    status=428,
    message="This mutation needs If-Match or If-None-Match.",
)

RETRY_AFTER_SECONDS = 1


def memory_error(
    definition: ErrorDef,
    *,
    error: str,
    category: Category,
    detail: str,
    location: Location | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> AppError:
    message = f"{detail} {GUIDANCE[category]}"
    details: dict[str, Any] = {"error": error, "category": str(category)}
    details["message"] = message
    if location is not None:
        details |= {
            "scope": location.scope,
            "area": location.area,
            "name": location.name,
        }
    details |= extra
    return AppError(definition, message=message, details=details, headers=headers)


def etag(version: str) -> str:
    return f'"{version}"'


def version_conflict_error(location: Location, content: str, version: str) -> AppError:
    return memory_error(
        version_conflict,
        error="VersionConflictError",
        category=Category.RECOVERABLE,
        detail=(
            f"The file at {location.describe()} changed since it was read; the "
            "current content and version are attached; merge your change into "
            "the current content and retry with the current version."
        ),
        location=location,
        headers={"ETag": etag(version)},
        content=content,
        version=version,
    )


def oversize_write_error(location: Location, size: int, limit: int) -> AppError:
    return memory_error(
        oversize_write,
        error="OversizeWriteError",
        category=Category.RECOVERABLE,
        detail=(
            f"The write to {location.describe()} is {size} bytes, over the "
            f"{limit}-byte limit; shorten it or split the content across files."
        ),
        location=location,
        size=size,
        limit=limit,
    )


def file_quota_exceeded_error(location: Location, limit: int) -> AppError:
    return memory_error(
        file_quota_exceeded,
        error="FileQuotaExceededError",
        category=Category.RECOVERABLE,
        detail=(
            f"Creating {location.describe()} would exceed the {limit}-file limit "
            f"of scope {location.scope}; add to an existing file or delete one first."
        ),
        location=location,
        limit=limit,
    )


def replace_fact_match_error(
    location: Location, content: str, version: str, match_count: int
) -> AppError:
    if match_count == 0:
        detail = (
            f"old_string matched 0 spans in {location.describe()}; widen or correct "
            "old_string using the attached current content so it matches."
        )
    else:
        detail = (
            f"old_string matched {match_count} spans in {location.describe()}; "
            "narrow old_string (include surrounding text) so it matches exactly "
            "one span."
        )
    return memory_error(
        replace_fact_match,
        error="ReplaceFactMatchError",
        category=Category.RECOVERABLE,
        detail=detail,
        location=location,
        content=content,
        version=version,
        match_count=match_count,
    )


def invalid_argument_error(argument: str, detail: str) -> AppError:
    sentence = f"Argument {argument} is invalid: {detail}"
    if not sentence.endswith((".", "!", "?")):
        sentence += "."
    return memory_error(
        invalid_argument,
        error="InvalidArgumentError",
        category=Category.RECOVERABLE,
        detail=sentence,
        argument=argument,
    )


def memory_not_found_error(location: Location) -> AppError:
    return memory_error(
        memory_not_found,
        error="NotFoundError",
        category=Category.RECOVERABLE,
        detail=f"No file exists at {location.describe()} yet; you may create it.",
        location=location,
        reason="file_absent",
    )


def version_absent_error(location: Location, version: str) -> AppError:
    """A version the file's history does not hold (never, or no longer)."""
    return memory_error(
        memory_not_found,
        error="NotFoundError",
        category=Category.RECOVERABLE,
        detail=(
            f"The history of {location.describe()} holds no version {version!r} "
            "(unknown, or pruned by retention); call list_versions for the versions "
            "it keeps."
        ),
        location=location,
        reason="version_absent",
    )


def history_absent_error(location: Location) -> AppError:
    """No version record at all: the file never existed or its history is gone."""
    return memory_error(
        memory_not_found,
        error="NotFoundError",
        category=Category.RECOVERABLE,
        detail=(
            f"No file exists at {location.describe()} and no history of one is "
            "kept; check the scope, area and name against the index."
        ),
        location=location,
        reason="file_absent",
    )


def system_read_only_error(location: Location) -> AppError:
    return memory_error(
        restricted_scope,
        error="RestrictedScopeError",
        category=Category.PERMANENT,
        detail=(
            f"The system/ area of scope {location.scope} is read-only (curated "
            "content); record corrections in another area."
        ),
        location=location,
        reason="system_read_only",
    )


def role_required_error(location: Location, roles: Iterable[str]) -> AppError:
    required = sorted(roles)
    return memory_error(
        restricted_scope,
        error="RestrictedScopeError",
        category=Category.PERMANENT,
        detail=(
            f"Scope {location.scope} is role-gated and the caller lacks a "
            f"permitted role ({', '.join(required)})."
        ),
        location=location,
        reason="role_required",
        required_roles=required,
    )


def resolver_failure_error(detail: str = "") -> AppError:
    sentence = (
        "Identity could not be resolved; memory is unavailable for this session; "
        "continue working without memory."
    )
    return memory_error(
        unauthorized,
        error="ResolverFailureError",
        category=Category.PERMANENT,
        detail=f"{detail} {sentence}" if detail else sentence,
        headers={"WWW-Authenticate": 'Bearer realm="wenchang"'},
    )


def backend_unavailable_error(reason: str) -> AppError:
    detail = (
        "The storage backend timed out."
        if reason == "timeout"
        else "The storage backend is unavailable."
    )
    return memory_error(
        backend_unavailable,
        error="BackendUnavailableError",
        category=Category.TRANSIENT,
        detail=detail,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        reason=reason,
    )


def precondition_required_error() -> AppError:
    return memory_error(
        precondition_required,
        error="PreconditionRequiredError",
        category=Category.RECOVERABLE,
        detail=(
            'This mutation needs a precondition: send If-Match: "<version>" to '
            "change an existing file, or If-None-Match: * to create one."
        ),
    )


import_conflict = ErrorDef(
    code="IMPORT_CONFLICT",
    status=409,
    message="An import in mode fail met files that already exist.",
)
purge_incomplete = ErrorDef(
    code="PURGE_INCOMPLETE",
    status=409,
    message="Objects remained after every purge pass.",
)

MAX_LISTED_NAMES = 20


def import_conflict_error(existing: Sequence[str]) -> AppError:
    shown = list(existing[:MAX_LISTED_NAMES])
    return memory_error(
        import_conflict,
        error="ImportConflictError",
        category=Category.PERMANENT,
        detail=(
            f"{len(existing)} of the imported files already exist (e.g. "
            f"{', '.join(shown)}); nothing was written. Import with mode skip to "
            "keep them or mode overwrite to replace them."
        ),
        existing=shown,
        existing_count=len(existing),
    )


def purge_incomplete_error(remaining: int, passes: int) -> AppError:
    return memory_error(
        purge_incomplete,
        error="PurgeIncompleteError",
        category=Category.TRANSIENT,
        detail=(
            f"{remaining} objects remained under the prefix after {passes} purge "
            "passes; something is still writing there. Revoke the entity's tokens "
            "and run memory.purge again."
        ),
        remaining=remaining,
        passes=passes,
    )


audit_unavailable = ErrorDef(
    code="AUDIT_UNAVAILABLE",
    status=501,
    message="This server keeps no audit log that can be queried.",
)


def audit_unavailable_error(store: str) -> AppError:
    return memory_error(
        audit_unavailable,
        error="AuditUnavailableError",
        category=Category.PERMANENT,
        detail=(
            f"This server sends audit events to {store} and keeps none to query; "
            "ask its operator, who can set WENCHANG_AUDIT to sqlite:///path or "
            "file:///dir to keep them."
        ),
        store=store,
    )


def audit_role_required_error(scope: str, roles: Iterable[str]) -> AppError:
    required = sorted(roles)
    return memory_error(
        restricted_scope,
        error="RestrictedScopeError",
        category=Category.PERMANENT,
        detail=(
            f"Reading the audit log of scope {scope} needs one of the roles "
            f"{', '.join(required)}, and the caller's grant has none of them."
        ),
        scope=scope,
        reason="role_required",
        required_roles=required,
    )
