from dataclasses import dataclass, field

from app.shared.errors import audit_role_required_error, invalid_argument_error
from app.shared.identity import Identity

from ..memory.policy import locate_entity, require_grant
from .domain.pages import decode_position
from .ports import AuditSelection, Position, Subject


@dataclass(frozen=True, slots=True)
class AuditPolicy:
    """Roles whose holders may read the audit log of a scope they are granted."""

    roles: frozenset[str] = field(default_factory=lambda: frozenset({"owner", "admin"}))


def audit_subjects(
    identity: Identity, scope: str | None, policy: AuditPolicy
) -> tuple[Subject, ...]:
    """The caller's entities whose events it may read: one scope, or all it may.

    A scope the caller lacks is INVALID_ARGUMENT(scope), as for every operation;
    a granted scope without an audit role is RESTRICTED_SCOPE(role_required).
    Without a scope, every granted scope with an audit role; none is
    role_required for the first granted scope.
    """
    if scope is not None:
        grants = {scope: require_grant(identity, scope)}
    else:
        grants = dict(sorted(identity.grants.items()))
    allowed = tuple(
        Subject(name, grant.entity_id)
        for name, grant in grants.items()
        if grant.role in policy.roles
    )
    if not allowed:
        refused = scope if scope is not None else next(iter(grants), "")
        raise audit_role_required_error(refused, policy.roles)
    return allowed


def entity_subject(scope: str, entity_id: str) -> Subject:
    """An entity an operator names directly, its names checked as every task's."""
    locate_entity(scope, entity_id)
    return Subject(scope, entity_id)


def require_position(
    key: bytes, selection: AuditSelection, cursor: str | None
) -> Position | None:
    """Where a page after ``cursor`` starts (None: the newest); a cursor issued
    for other filters is INVALID_ARGUMENT."""
    if not cursor:
        return None
    before = decode_position(key, selection, cursor)
    if before is None:
        raise invalid_argument_error(
            "cursor",
            "cursor was not issued for these filters; pass the next_cursor "
            "returned with the same filters, or omit it to start over",
        )
    return before
