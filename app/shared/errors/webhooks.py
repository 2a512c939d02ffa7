"""Errors of webhook management: a role that may not manage them, an unknown id."""

from tenchi.errors import AppError

from .access import restricted_scope
from .files import memory_not_found
from .payload import memory_error


def webhook_role_required_error(scope: str) -> AppError:
    """Webhooks of ``scope`` managed by a caller who does not own it."""
    return memory_error(
        restricted_scope,
        f"Managing webhooks of scope {scope} needs the role owner, and the "
        "caller's grant lacks it.",
        scope=scope,
        reason="role_required",
        required_roles=["owner"],
    )


def webhook_not_found_error(scope: str, endpoint_id: str) -> AppError:
    return memory_error(
        memory_not_found,
        f"No webhook {endpoint_id} is registered for the caller in scope {scope}; "
        "list the scope's webhooks for their ids.",
        scope=scope,
        reason="webhook_absent",
    )
