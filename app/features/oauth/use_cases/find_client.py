"""The client behind a ``client_id``: a registration, or its metadata document."""

from app.features.oauth.policy import require_live_client
from app.features.oauth.ports import ClientRecord, OAuthContext
from app.shared.errors.oauth import OAuthError


def is_document_url(client_id: str) -> bool:
    return client_id.startswith("https://")


async def find_client(client_id: str, context: OAuthContext) -> ClientRecord:
    """The client, or ``invalid_client``.

    An ``https`` client id names a Client ID Metadata Document, fetched (and
    cached) under the SSRF guards; any other is a registration, which expires
    once unused for the configured time.
    """
    if is_document_url(client_id):
        return await context.documents(client_id)
    client = context.store.get_client(client_id)
    if client is None:
        raise OAuthError("invalid_client", "The client is not registered.")
    stale_before = context.clock() - context.unused_client_ttl
    return require_live_client(client, stale_before=stale_before)
