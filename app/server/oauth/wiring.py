"""Builds the OAuth pieces of one app: its store, endpoints and MCP resolver."""

from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Scope

from app.features.oauth.ports import OAuthStore
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.infra.oauth.client_metadata_documents import ClientMetadataDocuments
from app.infra.oauth.token_resolver import OAuthResolver
from app.infra.sqlite.oauth_store import SqliteOAuthStore
from app.server.context import AppContext
from app.server.oauth.routes import OAuthEndpoints, base_url, challenge
from app.server.settings import Settings
from app.shared.identity import Resolver


def open_oauth_store(settings: Settings) -> OAuthStore:
    """Where OAuth state lives (``Settings.oauth_store_path``)."""
    path = settings.oauth_store_path
    return MemoryOAuthStore() if path is None else SqliteOAuthStore(path)


@dataclass(frozen=True, slots=True)
class OAuthWiring:
    routes: list[Route]
    resolver: Resolver
    """What ``/mcp`` accepts: OAuth access tokens, then the given resolver's."""
    challenge: Callable[[Scope, bool], str]


def wire_oauth(
    settings: Settings, tokens: Resolver, running: Callable[[], AppContext]
) -> OAuthWiring:
    store = open_oauth_store(settings)
    documents = ClientMetadataDocuments(
        store,
        trusted_hosts=settings.oauth_trusted_client_hosts,
        ca_file=settings.oauth_ca_file,
    )
    endpoints = OAuthEndpoints(
        settings, store=store, documents=documents, tokens=tokens, running=running
    )
    resource = f"{settings.public_url}/mcp" if settings.public_url else None

    def mcp_challenge(scope: Scope, invalid: bool) -> str:
        return challenge(base_url(settings, Request(scope)), invalid=invalid)

    return OAuthWiring(
        routes=endpoints.routes(),
        resolver=OAuthResolver(store, tokens, resource=resource),
        challenge=mcp_challenge,
    )
