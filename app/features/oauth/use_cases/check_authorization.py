"""Checks an authorization request before anyone is asked to consent."""

from collections.abc import Mapping
from dataclasses import dataclass

from app.features.oauth.domain import is_pkce_value, parse_scopes
from app.features.oauth.policy import require_redirect_uri, require_resource
from app.features.oauth.ports import ClientRecord, OAuthContext
from app.features.oauth.use_cases.find_client import find_client
from app.shared.errors.oauth import OAuthError

PARAMETERS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
    "scope",
    "resource",
)
"""What an authorization request may carry; the consent forms echo them."""


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    client: ClientRecord
    redirect_uri: str
    state: str
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str


class Unredirectable(OAuthError):
    """A refusal that must not go to the redirect URI: the client or the URI
    itself is unknown, so the page shows it instead."""


async def check_authorization(
    params: Mapping[str, str], context: OAuthContext
) -> AuthorizationRequest:
    """The request, or an OAuthError: ``Unredirectable`` when the client or
    its redirect URI cannot be trusted, any other redirects with its code."""
    client_id = params.get("client_id", "")
    if not client_id:
        raise Unredirectable("invalid_request", "client_id is missing.")
    try:
        client = await find_client(client_id, context)
    except OAuthError as exc:
        raise Unredirectable(exc.code, exc.description) from None
    redirect_uri = params.get("redirect_uri") or (
        client.redirect_uris[0] if len(client.redirect_uris) == 1 else ""
    )
    try:
        require_redirect_uri(client, redirect_uri)
    except OAuthError as exc:
        raise Unredirectable(exc.code, exc.description) from None
    if params.get("response_type") != "code":
        raise OAuthError("unsupported_response_type", "response_type must be code.")
    challenge = params.get("code_challenge", "")
    if params.get("code_challenge_method") != "S256" or not is_pkce_value(challenge):
        raise OAuthError(
            "invalid_request", "PKCE is required: code_challenge with method S256."
        )
    state = params.get("state", "")
    if not state:
        raise OAuthError("invalid_request", "state is required.")
    scopes = parse_scopes(params.get("scope"))
    if scopes is None:
        raise OAuthError(
            "invalid_scope", "scope may hold memory.read and memory.write."
        )
    require_resource(params.get("resource") or None, context.resource)
    return AuthorizationRequest(
        client, redirect_uri, state, challenge, scopes, context.resource
    )
