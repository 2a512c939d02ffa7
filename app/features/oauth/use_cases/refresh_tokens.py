"""The ``refresh_token`` grant: every use rotates; a reused token ends its family."""

from collections.abc import Mapping

from app.features.oauth.domain import digest, parse_scopes
from app.features.oauth.policy import require_holder, require_resource
from app.features.oauth.ports import OAuthContext, TokenResponse
from app.features.oauth.use_cases.find_client import find_client
from app.shared.errors.oauth import OAuthError

INVALID_REFRESH = "The refresh token is invalid, expired or revoked."


async def refresh_tokens(
    form: Mapping[str, str], context: OAuthContext
) -> TokenResponse:
    """A new pair for an unused refresh token of this client.

    A refresh token presented a second time was copied (by a thief or by a
    client that lost the answer): the whole family is revoked, so the thief's
    and the client's tokens both stop, and the person consents again.
    """
    client = await find_client(form.get("client_id", ""), context)
    presented = form.get("refresh_token", "")
    record = context.store.find_token(digest(presented)) if presented else None
    if record is None or record.kind != "refresh":
        raise OAuthError("invalid_grant", INVALID_REFRESH)
    require_holder(record.client_id, client, INVALID_REFRESH)
    if record.expires_at <= context.clock():
        raise OAuthError("invalid_grant", INVALID_REFRESH)
    if not context.store.mark_used(record.digest):
        context.store.revoke_family(record.family)
        await context.events("oauth.refresh_reuse", client.client_id, record.grants)
        raise OAuthError("invalid_grant", INVALID_REFRESH)
    require_resource(form.get("resource"), record.resource)
    scopes = parse_scopes(form.get("scope")) if form.get("scope") else record.scopes
    if scopes is None or not set(scopes) <= set(record.scopes):
        raise OAuthError(
            "invalid_scope", "A refresh may only narrow the granted scopes."
        )
    answer = context.issue_tokens(
        client_id=client.client_id,
        family=record.family,
        scopes=scopes,
        grants=record.grants,
        resource=record.resource,
    )
    await context.events("oauth.refresh", client.client_id, record.grants)
    return answer
