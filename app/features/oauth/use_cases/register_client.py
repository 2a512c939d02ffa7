"""Dynamic Client Registration (RFC 7591) of a public client."""

from collections.abc import Mapping

from app.features.oauth.domain import CLIENT_PREFIX, new_secret
from app.features.oauth.policy import require_registrable_uri
from app.features.oauth.ports import ClientInformation, ClientRecord, OAuthContext
from app.shared.errors.oauth import OAuthError

GRANT_TYPES = ("authorization_code", "refresh_token")
MAX_NAME = 200
MAX_REDIRECT_URIS = 10


def _client_metadata(problem: str) -> OAuthError:
    return OAuthError("invalid_client_metadata", problem)


def _redirect_uris(metadata: Mapping[str, object]) -> tuple[str, ...]:
    uris: object = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise OAuthError("invalid_redirect_uri", "redirect_uris must be a list of URIs")
    checked: list[str] = []
    listed: list[object] = list(uris)  # pyright: ignore[reportUnknownArgumentType]
    for uri in listed[: MAX_REDIRECT_URIS + 1]:
        checked.append(require_registrable_uri(uri))
    if len(checked) > MAX_REDIRECT_URIS:
        raise OAuthError("invalid_redirect_uri", "register at most 10 redirect URIs")
    return tuple(checked)


def _name(metadata: Mapping[str, object]) -> str:
    name = metadata.get("client_name")
    if name is None:
        return ""
    if not isinstance(name, str) or len(name) > MAX_NAME or not name.isprintable():
        raise _client_metadata(
            "client_name must be printable text of 200 characters or fewer"
        )
    return name


def _grant_types(metadata: Mapping[str, object]) -> list[str]:
    asked = metadata.get("grant_types", ["authorization_code"])
    if not isinstance(asked, list) or not set(asked) <= set(GRANT_TYPES):  # pyright: ignore[reportUnknownArgumentType]
        raise _client_metadata(
            "grant_types may hold authorization_code and refresh_token"
        )
    return [grant for grant in GRANT_TYPES if grant in asked]


async def register_client(
    metadata: Mapping[str, object], context: OAuthContext
) -> ClientInformation:
    """Registers the client; the answer is its RFC 7591 client information.

    Every client is public (``token_endpoint_auth_method: none``) and proves
    itself by PKCE: no secret is issued, whatever method it asked for.
    """
    redirect_uris = _redirect_uris(metadata)
    name = _name(metadata)
    grant_types = _grant_types(metadata)
    response_types = metadata.get("response_types", ["code"])
    if response_types != ["code"]:
        raise _client_metadata('response_types must be ["code"]')
    now = context.clock()
    context.store.drop_unused_clients(now - context.unused_client_ttl)
    client = ClientRecord(
        client_id=new_secret(CLIENT_PREFIX),
        name=name,
        redirect_uris=redirect_uris,
        kind="registered",
        created_at=now,
    )
    context.store.save_client(client)
    return {
        "client_id": client.client_id,
        "client_id_issued_at": int(now),
        "client_name": name or None,
        "redirect_uris": list(redirect_uris),
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
