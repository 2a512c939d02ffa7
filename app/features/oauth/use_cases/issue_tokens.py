"""Minting an access and refresh token pair: only their digests are kept."""

from collections.abc import Mapping
from typing import Any

from app.features.oauth.domain import (
    ACCESS_PREFIX,
    REFRESH_PREFIX,
    REFRESH_TTL_SECONDS,
    digest,
    new_secret,
)
from app.features.oauth.ports import OAuthContext, TokenKind, TokenRecord
from app.shared.identity import Grant


# doctor: public -- called only by the grants, after they checked the code or
# refresh token it is issued for.
def _pair(
    access: str, refresh: str, now: float, access_ttl: float
) -> tuple[tuple[str, TokenKind, float], ...]:
    return (
        (access, "access", now + access_ttl),
        (refresh, "refresh", now + REFRESH_TTL_SECONDS),
    )


def issue_tokens(
    context: OAuthContext,
    *,
    client_id: str,
    family: str,
    scopes: tuple[str, ...],
    grants: Mapping[str, Grant],
    resource: str,
) -> dict[str, Any]:
    """A new pair in ``family``; the answer is the RFC 6749 token response."""
    now = context.clock()
    context.store.sweep(now)
    access, refresh = new_secret(ACCESS_PREFIX), new_secret(REFRESH_PREFIX)
    held = dict(grants)
    context.store.save_tokens(
        [
            TokenRecord(
                digest(secret), kind, family, client_id, scopes, held, resource, expiry
            )
            for secret, kind, expiry in _pair(access, refresh, now, context.access_ttl)
        ]
    )
    context.store.touch_client(client_id, now)
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": int(context.access_ttl),
        "refresh_token": refresh,
        "scope": " ".join(scopes),
    }
