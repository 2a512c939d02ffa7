"""Bearer credentials on the MCP endpoint: OAuth access tokens beside ``wct_`` ones."""

import hmac
import time
from collections.abc import Callable

from app.features.oauth.domain import (
    ACCESS_PREFIX,
    client_token_id,
    digest,
    effective_grants,
)
from app.features.oauth.ports import OAuthStore
from app.shared.identity import Identity, ResolutionFailure, Resolver

INVALID = "The bearer token is not valid."


class OAuthResolver:
    """An OAuth access token resolves to the grants its person chose (made
    read-only without ``memory.write``), only for the resource it was issued
    for; any other credential goes to ``tokens``."""

    def __init__(
        self,
        store: OAuthStore,
        tokens: Resolver,
        *,
        resource: str | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._tokens = tokens
        self._resource = resource
        self._clock = clock

    def resolve(self, credentials: str) -> Identity | ResolutionFailure:
        if not credentials.startswith(ACCESS_PREFIX):
            return self._tokens.resolve(credentials)
        key = digest(credentials)
        record = self._store.find_token(key)
        if (
            record is None
            or record.kind != "access"
            or not hmac.compare_digest(record.digest, key)
        ):
            return ResolutionFailure(INVALID)
        if record.expires_at <= self._clock():
            return ResolutionFailure("The bearer token has expired.")
        if not self._serves(record.resource):
            return ResolutionFailure(INVALID)
        client = self._store.get_client(record.client_id)
        name = client.name if client is not None and client.name else "client"
        return Identity(
            grants=effective_grants(record.grants, record.scopes),
            label=f"oauth:{name}",
            token_id=client_token_id(record.client_id),
        )

    def _serves(self, resource: str) -> bool:
        # Without a configured public URL the server knows itself only by the
        # path of its one resource: every token it issued named its /mcp.
        if self._resource is None:
            return resource.endswith("/mcp")
        return resource == self._resource
