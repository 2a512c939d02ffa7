"""Errors of the service itself: storage down, no audit log, an operator task."""

from collections.abc import Sequence

from tenchi.errors import AppError, ErrorDef

from .payload import memory_error

RETRY_AFTER_SECONDS = 1
MAX_LISTED_NAMES = 20


backend_unavailable = ErrorDef(
    code="BACKEND_UNAVAILABLE",
    status=503,
    message="The storage backend is unavailable.",
    headers=("Retry-After",),
)


def backend_unavailable_error(reason: str, detail: str | None = None) -> AppError:
    if detail is None:
        detail = (
            "The storage backend timed out."
            if reason == "timeout"
            else "The storage backend is unavailable."
        )
    return memory_error(
        backend_unavailable,
        detail,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        reason=reason,
    )


def outcome_unknown_error() -> AppError:
    """A write whose landing the backend could not confirm or rule out."""
    return memory_error(
        backend_unavailable,
        "The storage backend did not confirm the write, and whether it landed "
        "could not be checked: read the file before writing it again.",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        reason="timeout",
        outcome="unknown",
    )


audit_unavailable = ErrorDef(
    code="AUDIT_UNAVAILABLE",
    status=501,
    message="This server keeps no audit log that can be queried.",
)


def audit_unavailable_error(store: str) -> AppError:
    return memory_error(
        audit_unavailable,
        f"This server sends audit events to {store} and keeps none to query; "
        "ask its operator, who can set WENCHANG_AUDIT to sqlite:///path or "
        "file:///dir to keep them.",
        store=store,
    )


import_conflict = ErrorDef(
    code="IMPORT_CONFLICT",
    status=409,
    message="An import in mode fail met files that already exist.",
)


def import_conflict_error(
    existing: Sequence[str], *, count: int | None = None
) -> AppError:
    """``existing`` names them (or, with ``count``, the first ``count`` of them)."""
    shown = list(existing[:MAX_LISTED_NAMES])
    total = len(existing) if count is None else count
    return memory_error(
        import_conflict,
        f"{total} of the imported files already exist (e.g. "
        f"{', '.join(shown)}); nothing was written. Import with mode skip to "
        "keep them or mode overwrite to replace them.",
        existing=shown,
        existing_count=total,
    )


purge_incomplete = ErrorDef(
    code="PURGE_INCOMPLETE",
    status=409,
    message="Objects remained after every purge pass.",
)


def purge_incomplete_error(remaining: int, passes: int) -> AppError:
    return memory_error(
        purge_incomplete,
        f"{remaining} objects remained under the prefix after {passes} purge "
        "passes; something is still writing there. Revoke the entity's tokens "
        "and run memory.purge again.",
        remaining=remaining,
        passes=passes,
    )
