"""Who may see expired files, and the clock's moment a read hides them from."""

from collections.abc import Callable
from datetime import datetime

from app.shared.errors import expired_role_required_error, invalid_argument_error
from app.shared.identity import Identity

from ..domain.expiry import Expiry
from . import locate_entity

OWNER_ROLE = "owner"


def hidden_after(
    identity: Identity,
    scope: str | None,
    include_expired: bool,
    clock: Callable[[], datetime],
) -> Expiry | None:
    """What hides expired files from a read; None shows them (owners only).

    A caller who asks to see expired files of a scope they do not own (of
    any scope they hold, when ``scope`` is None) is refused (RESTRICTED_SCOPE,
    role_required) rather than shown less.
    """
    if not include_expired:
        return Expiry(clock)
    for name in sorted(identity.grants) if scope is None else [scope]:
        grant = identity.grants.get(name)
        if grant is not None and grant.role != OWNER_ROLE:
            raise expired_role_required_error(name)
    return None


def locate_sweep(scope: str | None, entity_id: str | None) -> str:
    """The key prefix a sweep covers: one entity, one scope, or all ("")."""
    if entity_id is not None:
        if scope is None:
            raise invalid_argument_error(
                "scope", "entity_id names an entity of a scope"
            )
        return locate_entity(scope, entity_id)
    return "" if scope is None else f"{scope}/"
