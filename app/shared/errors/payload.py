"""The payload every memory error carries in ``details``, built in one place."""

from tenchi.errors import AppError, ErrorDef

from ..locations import Location
from .catalogue import GUIDANCE, KINDS


def memory_error(
    definition: ErrorDef,
    detail: str,
    *,
    location: Location | None = None,
    headers: dict[str, str] | None = None,
    **extra: object,
) -> AppError:
    """``error``, ``category``, ``message``, the location if any, then ``extra``."""
    kind = KINDS[definition.code]
    message = f"{detail} {GUIDANCE[kind.category]}"
    details: dict[str, object] = {"error": kind.error, "category": str(kind.category)}
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
