"""The ``authorization_code`` grant: a code and its PKCE verifier become tokens."""

import secrets
from collections.abc import Mapping
from typing import Any

from app.features.oauth.domain import digest, pkce_matches
from app.features.oauth.ports import OAuthContext
from app.features.oauth.use_cases.find_client import find_client
from app.features.oauth.use_cases.issue_tokens import issue_tokens
from app.shared.errors.oauth import OAuthError

INVALID_CODE = "The authorization code is invalid, expired or already used."


# doctor: public -- an OAuth step before any identity exists; the client
# proves itself by its registration, redirect URI and PKCE verifier.
async def exchange_code(
    form: Mapping[str, str], context: OAuthContext
) -> dict[str, Any]:
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
    if record.client_id != client.client_id:
        raise OAuthError("invalid_grant", INVALID_CODE)
    if form.get("redirect_uri", record.redirect_uri) != record.redirect_uri:
        raise OAuthError(
            "invalid_grant", "redirect_uri differs from the authorization request's."
        )
    if not pkce_matches(verifier, record.code_challenge):
        raise OAuthError(
            "invalid_grant", "code_verifier does not match the code_challenge."
        )
    resource = form.get("resource")
    if resource is not None and resource.rstrip("/") != record.resource:
        raise OAuthError(
            "invalid_target", "resource must be this server's MCP endpoint."
        )
    answer = issue_tokens(
        context,
        client_id=client.client_id,
        family=secrets.token_hex(16),
        scopes=record.scopes,
        grants=record.grants,
        resource=record.resource,
    )
    await context.events("oauth.token", client.client_id, record.grants)
    return answer
