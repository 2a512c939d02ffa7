"""What OAuth keeps (clients, codes, tokens) and what each use case receives.

Only digests of codes and tokens are stored. Every method is synchronous and
short (one statement or a point lookup): an access token is checked on every
MCP request by a synchronous resolver, and issuing one is rare.
"""

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypedDict

from app.features.oauth.domain import (
    ACCESS_PREFIX,
    REFRESH_PREFIX,
    REFRESH_TTL_SECONDS,
    digest,
    new_secret,
)
from app.shared.identity import Grant

ClientKind = Literal["registered", "metadata_document"]
TokenKind = Literal["access", "refresh"]


@dataclass(frozen=True, slots=True)
class ClientRecord:
    client_id: str
    name: str
    redirect_uris: tuple[str, ...]
    kind: ClientKind
    created_at: float
    last_used_at: float | None = None
    """When a token was last issued to it (unused registrations expire)."""


@dataclass(frozen=True, slots=True)
class CodeRecord:
    digest: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    scopes: tuple[str, ...]
    grants: Mapping[str, Grant]
    resource: str
    expires_at: float


@dataclass(frozen=True, slots=True)
class TokenRecord:
    digest: str
    kind: TokenKind
    family: str
    """Every token issued from one consent, through all its refreshes."""
    client_id: str
    scopes: tuple[str, ...]
    grants: Mapping[str, Grant]
    resource: str
    expires_at: float
    used: bool = False
    """A refresh token already exchanged: presenting it again is reuse."""


@dataclass(frozen=True, slots=True)
class ClientGrants:
    """One client holding live tokens, for ``wenchang token list``."""

    client: ClientRecord
    grants: Mapping[str, Grant]
    scopes: tuple[str, ...]


class TokenResponse(TypedDict):
    """RFC 6749's successful token response (section 5.1)."""

    access_token: str
    token_type: str
    expires_in: int
    refresh_token: str
    scope: str


class ClientInformation(TypedDict):
    """RFC 7591's client information response of a registered public client."""

    client_id: str
    client_id_issued_at: int
    client_name: str | None
    redirect_uris: list[str]
    grant_types: list[str]
    response_types: list[str]
    token_endpoint_auth_method: str


class OAuthStore(Protocol):
    def save_client(self, client: ClientRecord) -> None: ...

    def get_client(self, client_id: str) -> ClientRecord | None: ...

    def touch_client(self, client_id: str, at: float) -> None: ...

    def drop_unused_clients(self, registered_before: float) -> int:
        """Delete registered (not metadata-document) clients created before
        the moment and never used since it, with their tokens."""
        ...

    def save_code(self, code: CodeRecord) -> None: ...

    def take_code(self, digest: str) -> CodeRecord | None:
        """The code, removed in the same step: a second take finds nothing."""
        ...

    def save_tokens(self, tokens: Sequence[TokenRecord]) -> None: ...

    def find_token(self, digest: str) -> TokenRecord | None: ...

    def mark_used(self, digest: str) -> bool:
        """Mark an unused refresh token used; False if it was used already."""
        ...

    def revoke_family(self, family: str) -> int:
        """Delete every token of ``family``; how many there were."""
        ...

    def revoke_client(self, client_id: str) -> int:
        """Delete every token of ``client_id``; how many there were."""
        ...

    def clients_with_tokens(self, now: float) -> list[ClientGrants]:
        """Each client with an unexpired token, the grants of its newest family."""
        ...

    def sweep(self, now: float) -> None:
        """Delete expired codes and tokens."""
        ...


class OAuthEvents(Protocol):
    async def __call__(
        self, operation: str, client_id: str, grants: Mapping[str, Grant]
    ) -> None:
        """Record one audit event per granted entity (``oauth.consent``, …)."""
        ...


ClientDocuments = Callable[[str], Awaitable[ClientRecord]]
"""Fetches and checks the metadata document at an ``https`` client id."""


@dataclass(frozen=True, slots=True)
class OAuthContext:
    store: OAuthStore
    issuer: str
    """This authorization server's public base URL, without a trailing slash."""
    access_ttl: float
    unused_client_ttl: float
    events: OAuthEvents
    documents: ClientDocuments
    seal_key: bytes
    """Signs the consent page's anti-forgery and sign-in fields."""
    clock: Callable[[], float] = time.time

    @property
    def resource(self) -> str:
        """The one protected resource: this server's MCP endpoint."""
        return f"{self.issuer}/mcp"

    def issue_tokens(
        self,
        *,
        client_id: str,
        family: str,
        scopes: tuple[str, ...],
        grants: Mapping[str, Grant],
        resource: str,
    ) -> TokenResponse:
        """A new access and refresh pair in ``family`` (only their digests are
        kept); the answer is the RFC 6749 token response."""
        now = self.clock()
        self.store.sweep(now)
        access, refresh = new_secret(ACCESS_PREFIX), new_secret(REFRESH_PREFIX)
        pair: tuple[tuple[str, TokenKind, float], ...] = (
            (access, "access", now + self.access_ttl),
            (refresh, "refresh", now + REFRESH_TTL_SECONDS),
        )
        held = dict(grants)
        self.store.save_tokens(
            [
                TokenRecord(
                    digest(secret), kind, family, client_id, scopes, held, resource, end
                )
                for secret, kind, end in pair
            ]
        )
        self.store.touch_client(client_id, now)
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.access_ttl),
            "refresh_token": refresh,
            "scope": " ".join(scopes),
        }
