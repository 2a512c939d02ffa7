"""Refuses a memory write carrying two ``Idempotency-Key`` headers.

Which one a layer reads differs (the last one won, silently), so a retry
holding the other key would apply again: an ambiguous request is refused
rather than guessed at, after the 401 an unauthenticated one gets first.
"""

from starlette.types import ASGIApp, Scope

from app.server.http.encoded_slash_guard import FILES_PREFIX, authenticated
from app.server.http.hooks import refusal
from app.shared.errors import invalid_argument_error
from app.shared.identity import Resolver

KEY_HEADER = b"idempotency-key"


def duplicate_key_refusal(
    scope: Scope, names: list[bytes], resolver: Resolver
) -> ASGIApp | None:
    """The refusal of an authenticated memory request with two keys.

    ``names``: the request's header names (one key, the usual case, ends it).
    """
    if names.count(KEY_HEADER) < 2 or scope["method"] in ("GET", "HEAD"):
        return None
    if not (scope.get("raw_path") or b"").startswith(FILES_PREFIX):
        return None
    if not authenticated(scope, resolver):
        return None
    return refusal(
        invalid_argument_error(
            "idempotency_key", "send one Idempotency-Key header, not several"
        )
    )
