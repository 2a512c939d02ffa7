"""OAuth 2.1 end to end: the MCP SDK's own OAuth client against a real server.

The SDK's ``OAuthClientProvider`` discovers the authorization server from the
401 of ``/mcp``, registers (RFC 7591), sends a person to the consent page
(answered here as a browser without JavaScript would), exchanges the code and
calls tools with the access token.
"""

from collections.abc import Iterator

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.mcp_scenarios import create
from tests.mcp_support import SESSION_SECONDS, ok
from tests.oauth_support import CALLBACK, Site, consent, oauth_site


class MemoryTokens(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """Answers the consent page the SDK's redirect handler is given."""

    def __init__(self, token: str, *, read_only: bool = False) -> None:
        self._token = token
        self._read_only = read_only
        self.answer: dict[str, str] = {}

    async def redirect(self, url: str) -> None:
        self.answer = await anyio.to_thread.run_sync(
            lambda: consent(url, self._token, read_only=self._read_only)
        )

    async def callback(self) -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=self.answer["code"],
            state=self.answer.get("state"),
            iss=self.answer.get("iss"),
        )


def provider(
    site: Site, person: Person, storage: MemoryTokens, metadata_url: str | None = None
) -> OAuthClientProvider:
    return OAuthClientProvider(
        f"{site.url}/mcp",
        OAuthClientMetadata(
            client_name="SDK assistant",
            redirect_uris=[AnyUrl(CALLBACK)],
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage,
        redirect_handler=person.redirect,
        callback_handler=person.callback,
        client_metadata_url=metadata_url,
    )


async def session_calls(site: Site, auth: OAuthClientProvider) -> list[str]:
    with anyio.fail_after(SESSION_SECONDS):
        async with (
            httpx2.AsyncClient(auth=auth, timeout=30.0) as http,
            Client(streamable_http_client(f"{site.url}/mcp", http_client=http)) as mcp,
        ):
            created = await create(mcp, "oauth", "tea")
            index = ok(await mcp.call_tool("get_memory_index", {}))
            return [created["sources"][0], *(e["name"] for e in index["entries"])]


@pytest.fixture(scope="module", params=["sqlite", "memory"])
def site(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Site]:
    """A server keeping OAuth state in its SQLite database, or in memory."""
    tmp = tmp_path_factory.mktemp("oauth-flow")
    storage = (
        f"sqlite:///{tmp / 'memory.db'}" if request.param == "sqlite" else "memory://"
    )
    with oauth_site(tmp, storage=storage) as served:
        yield served


async def test_the_sdk_client_registers_consents_and_calls_tools(site: Site) -> None:
    storage = MemoryTokens()
    person = Person(site.owner)

    calls = await session_calls(site, provider(site, person, storage))

    assert calls[0] == "oauth:SDK assistant"
    assert "tea" in calls[1:]
    assert person.answer["iss"] == site.url
    assert storage.tokens is not None and storage.tokens.refresh_token
    assert storage.client is not None and storage.client.client_id.startswith("wcl_")
