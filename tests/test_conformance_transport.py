"""The transport conformance suite on every transport and storage adapter.

A storage adapter joins every transport by one entry in ``STORAGE_ADAPTERS``.
"""

from collections.abc import AsyncGenerator, Iterator
from contextlib import AbstractAsyncContextManager

import pytest

from app.server.asgi import build_app
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from app.shared.identity import Identity
from tests.support.client_transport import client_transport
from tests.support.storage_adapters import ADAPTERS, storage_url
from tests.support.transport_conformance import (
    SUITE_SETTINGS,
    Connect,
    Transport,
    TransportConformance,
)
from tests.support.transports import (
    TokenRegistry,
    mcp_transport,
    serve_in_thread,
    use_case_transport,
)

STORAGE_ADAPTERS = ADAPTERS
"""Every adapter of ``tests.support.storage_adapters``; each runs every transport."""


@pytest.fixture(scope="module", params=STORAGE_ADAPTERS)
def settings(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Settings:
    kind: str = request.param
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
    root = tmp_path_factory.mktemp(kind)
    return Settings(
        storage=storage_url(kind, root),
        tokens_file=str(root / "tokens.json"),
        cursor_secret="conformance-cursor-secret",
        **SUITE_SETTINGS,
    )


class Server:
    def __init__(self, base_url: str, tokens: TokenRegistry) -> None:
        self.base_url = base_url
        self.tokens = tokens


@pytest.fixture(scope="module")
def server(settings: Settings) -> Iterator[Server]:
    tokens = TokenRegistry()
    app = build_app(settings, resolver=tokens, on_call=())
    with serve_in_thread(app) as base_url:
        yield Server(base_url, tokens)


class TestUseCases(TransportConformance):
    @pytest.fixture
    async def connect(self, settings: Settings) -> AsyncGenerator[Connect]:
        async with create_lifespan(settings)() as runtime:
            yield lambda identity: use_case_transport(runtime.context, identity)


class TestHttpClient(TransportConformance):
    @pytest.fixture
    def connect(self, server: Server) -> Connect:
        def connect(
            identity: Identity | None,
        ) -> AbstractAsyncContextManager[Transport]:
            token = server.tokens.issue(identity) if identity else "not-a-token"
            return client_transport(server.base_url, token)

        return connect


class TestMcpSession(TransportConformance):
    @pytest.fixture
    def connect(self, server: Server) -> Connect:
        def connect(
            identity: Identity | None,
        ) -> AbstractAsyncContextManager[Transport]:
            token = server.tokens.issue(identity) if identity else "not-a-token"
            return mcp_transport(server.base_url, token)

        return connect
