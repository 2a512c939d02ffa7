"""The ``authorization_code`` grant: a code and its PKCE verifier become tokens."""

import secrets
from collections.abc import Mapping

from app.features.oauth.domain import digest
from app.features.oauth.policy import (
    INVALID_CODE,
    require_holder,
    require_resource,
    require_verifier,
)
from app.features.oauth.ports import OAuthContext, TokenResponse
from app.features.oauth.use_cases.find_client import find_client
from app.shared.errors.oauth import OAuthError


async def exchange_code(
    form: Mapping[str, str], context: OAuthContext
) -> TokenResponse:
    """Tokens for a code, taken once: a second use, a wrong verifier, client,
    redirect URI or resource is refused and the code is gone either way."""
    client = await find_client(form.get("client_id", ""), context)
    code = form.get("code", "")
    verifier = form.get("code_verifier", "")
    if not code or not verifier:
        raise OAuthError("invalid_request", "code and code_verifier are required.")
    record = context.store.take_code(digest(code))
    if record is None or record.expires_at <= context.clock():
        raise OAuthError("invalid_grant", INVALID_CODE)
    require_holder(record.client_id, client, INVALID_CODE)
    if form.get("redirect_uri", record.redirect_uri) != record.redirect_uri:
        raise OAuthError(
            "invalid_grant", "redirect_uri differs from the authorization request's."
        )
    require_verifier(verifier, record.code_challenge)
    require_resource(form.get("resource"), record.resource)
    answer = context.issue_tokens(
        client_id=client.client_id,
        family=secrets.token_hex(16),
        scopes=record.scopes,
        grants=record.grants,
        resource=record.resource,
    )
    await context.events("oauth.token", client.client_id, record.grants)
    return answer
