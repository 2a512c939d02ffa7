"""A person's answer on the consent page: a code for the client, or a refusal."""

from collections.abc import Collection, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from app.features.oauth.domain import (
    CODE_PREFIX,
    CODE_TTL_SECONDS,
    digest,
    new_secret,
)
from app.features.oauth.policy import consented_grants
from app.features.oauth.ports import CodeRecord, OAuthContext
from app.features.oauth.use_cases.check_authorization import AuthorizationRequest
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant


def redirect_to(uri: str, **params: str) -> str:
    """``uri`` with ``params`` added to its query (RFC 6749 §4.1.2)."""
    parts = urlsplit(uri)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit(
        (parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment)
    )


def refusal_redirect(
    redirect_uri: str, state: str, error: OAuthError, issuer: str
) -> str:
    """The redirect URI carrying a refusal, e.g. ``access_denied``."""
    return redirect_to(
        redirect_uri,
        error=error.code,
        error_description=error.description,
        state=state,
        iss=issuer,
    )


async def grant_consent(
    request: AuthorizationRequest,
    held: Mapping[str, Grant],
    chosen: Collection[str],
    *,
    read_only: bool,
    context: OAuthContext,
) -> str:
    """Where the browser goes after ``allow``: the redirect URI with a code.

    ``held`` are the signed-in token's grants; ``chosen`` the ``scope=entity:role``
    texts the person ticked, each of which must be one of them.
    """
    grants, forced = consented_grants(held, chosen, read_only=read_only)
    scopes = forced or request.scopes
    code = new_secret(CODE_PREFIX)
    context.store.save_code(
        CodeRecord(
            digest=digest(code),
            client_id=request.client.client_id,
            redirect_uri=request.redirect_uri,
            code_challenge=request.code_challenge,
            scopes=scopes,
            grants=grants,
            resource=request.resource,
            expires_at=context.clock() + CODE_TTL_SECONDS,
        )
    )
    await context.events("oauth.consent", request.client.client_id, grants)
    return redirect_to(
        request.redirect_uri, code=code, state=request.state, iss=context.issuer
    )
