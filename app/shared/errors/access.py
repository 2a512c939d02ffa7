"""Errors about who may do what: a read-only area, a missing role, no identity."""

from collections.abc import Iterable
from typing import Any

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


ROLE_GATED = (
    "Scope {scope} is role-gated and the caller lacks a permitted role ({roles})."
)
AUDIT_ROLE_GATED = (
    "Reading the audit log of scope {scope} needs one of the roles {roles}, "
    "and the caller's grant has none of them."
)


def _role_required(
    template: str, scope: str, roles: Iterable[str], /, **where: Any
) -> AppError:
    """The caller's grant in ``scope`` has none of ``roles``."""
    required = sorted(roles)
    return memory_error(
        restricted_scope,
        template.format(scope=scope, roles=", ".join(required)),
        **where,
        reason="role_required",
        required_roles=required,
    )


def role_required_error(location: Location, roles: Iterable[str]) -> AppError:
    return _role_required(ROLE_GATED, location.scope, roles, location=location)


EXPIRED_ROLE_GATED = (
    "Showing expired files of scope {scope} needs the role {roles}, and the "
    "caller's grant lacks it."
)


def expired_role_required_error(scope: str) -> AppError:
    """include_expired asked by a caller who does not own ``scope``."""
    return _role_required(EXPIRED_ROLE_GATED, scope, ("owner",), scope=scope)


def audit_role_required_error(scope: str, roles: Iterable[str]) -> AppError:
    return _role_required(AUDIT_ROLE_GATED, scope, roles, scope=scope)


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
