"""Who may see expired files, and the clock's moment a read hides them from."""

from collections.abc import Callable
from datetime import datetime

from app.shared.errors import expired_role_required_error
from app.shared.identity import Identity

from ..domain.expiry import Expiry

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
