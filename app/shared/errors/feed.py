"""Errors of the change feed: a cursor whose changes are no longer kept."""

from tenchi.errors import AppError, ErrorDef

from .payload import memory_error

cursor_expired = ErrorDef(
    code="CURSOR_EXPIRED",
    status=410,
    message="The changes after this cursor are no longer kept.",
)


def cursor_expired_error(scope: str) -> AppError:
    """Changes after the cursor were pruned by retention (or erased by a purge)."""
    return memory_error(
        cursor_expired,
        f"Changes of scope {scope!r} after this cursor are no longer kept "
        "(older than the retention, or erased); read the current files again, "
        "then read the feed without a cursor (or from its newest change).",
        scope=scope,
    )
