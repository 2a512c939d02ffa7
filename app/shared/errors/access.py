"""Errors about who may do what: a read-only area, a missing role, no identity."""

from collections.abc import Iterable

from tenchi.errors import AppError, ErrorDef

from ..locations import Location
from .payload import memory_error

restricted_scope = ErrorDef(
    code="RESTRICTED_SCOPE", status=403, message="The caller may not write there."
)


def system_read_only_error(location: Location) -> AppError:
    return memory_error(
        restricted_scope,
        f"The system/ area of scope {location.scope} is read-only (curated "
        "content); record corrections in another area.",
        location=location,
        reason="system_read_only",
    )


def role_required_error(location: Location, roles: Iterable[str]) -> AppError:
    required = sorted(roles)
    return memory_error(
        restricted_scope,
        f"Scope {location.scope} is role-gated and the caller lacks a "
        f"permitted role ({', '.join(required)}).",
        location=location,
        reason="role_required",
        required_roles=required,
    )


def audit_role_required_error(scope: str, roles: Iterable[str]) -> AppError:
    required = sorted(roles)
    return memory_error(
        restricted_scope,
        f"Reading the audit log of scope {scope} needs one of the roles "
        f"{', '.join(required)}, and the caller's grant has none of them.",
        scope=scope,
        reason="role_required",
        required_roles=required,
    )


unauthorized = ErrorDef(
    code="UNAUTHORIZED",
    status=401,
    message="Identity could not be resolved.",
    headers=("WWW-Authenticate",),
)


def resolver_failure_error(detail: str = "") -> AppError:
    sentence = (
        "Identity could not be resolved; memory is unavailable for this session; "
        "continue working without memory."
    )
    return memory_error(
        unauthorized,
        f"{detail} {sentence}" if detail else sentence,
        headers={"WWW-Authenticate": 'Bearer realm="wenchang"'},
    )
