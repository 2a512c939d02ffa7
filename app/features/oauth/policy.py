"""Who may have what in the OAuth flow: the checks every grant of access makes."""

from collections.abc import Collection, Mapping

from app.features.oauth.domain import (
    READ,
    READ_ONLY_ROLE,
    grant_text,
    pkce_matches,
    redirect_uri_matches,
    redirect_uri_problem,
)
from app.features.oauth.ports import ClientRecord
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant

INVALID_CODE = "The authorization code is invalid, expired or already used."
FOREIGN_RESOURCE = "resource must be this server's MCP endpoint."


def require_live_client(client: ClientRecord, *, stale_before: float) -> ClientRecord:
    """A registration used (or made) since ``stale_before``, else invalid_client."""
    if max(client.created_at, client.last_used_at or 0) < stale_before:
        raise OAuthError(
            "invalid_client", "The client registration expired unused; register again."
        )
    return client


def require_redirect_uri(client: ClientRecord, given: str) -> str:
    if not any(redirect_uri_matches(uri, given) for uri in client.redirect_uris):
        raise OAuthError(
            "invalid_request", "redirect_uri is not one the client registered."
        )
    return given


def require_registrable_uri(uri: object) -> str:
    if not isinstance(uri, str):
        raise OAuthError("invalid_redirect_uri", "each redirect URI is a string")
    problem = redirect_uri_problem(uri)
    if problem is not None:
        raise OAuthError("invalid_redirect_uri", problem)
    return uri


def require_resource(given: str | None, expected: str) -> None:
    """RFC 8707: the only resource is this server's MCP endpoint."""
    if given is not None and given.rstrip("/") != expected:
        raise OAuthError("invalid_target", FOREIGN_RESOURCE)


def require_holder(holder_id: str, client: ClientRecord, problem: str) -> None:
    """A code or token is used only by the client it was issued to."""
    if holder_id != client.client_id:
        raise OAuthError("invalid_grant", problem)


def require_verifier(verifier: str, challenge: str) -> None:
    if not pkce_matches(verifier, challenge):
        raise OAuthError(
            "invalid_grant", "code_verifier does not match the code_challenge."
        )


def consented_grants(
    held: Mapping[str, Grant], chosen: Collection[str], *, read_only: bool
) -> tuple[dict[str, Grant], tuple[str, ...] | None]:
    """The grants a person gave (each one of ``held``), and the scopes they
    force: ``memory.read`` alone when read only, else None (as requested)."""
    by_text = {
        grant_text(scope, grant): (scope, grant) for scope, grant in held.items()
    }
    if not chosen or any(text not in by_text for text in chosen):
        raise OAuthError("invalid_request", "Choose at least one of your grants.")
    grants = dict(by_text[text] for text in chosen)
    if not read_only:
        return grants, None
    readers = {s: Grant(g.entity_id, READ_ONLY_ROLE) for s, g in grants.items()}
    return readers, (READ,)
