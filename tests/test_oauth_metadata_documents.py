"""Client ID Metadata Documents: a client named by an https URL, fetched by the
server over TLS (a test CA through WENCHANG_OAUTH_CA_FILE) under SSRF guards.

The MCP SDK's own client uses its metadata URL as client_id and ends in tool
calls; a host that is not trusted and resolves to (or is) a private address is
refused, as is a document that names another client_id."""

import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import trustme

from tests.mcp_support import LOOPBACK
from tests.oauth_support import CALLBACK, Site, authorization_url, oauth_site, pkce
from tests.test_oauth_flow import MemoryTokens, Person, provider, session_calls


@dataclass(frozen=True, slots=True)
class Documents:
    port: int
    ca_file: Path

    def url(self, host: str, name: str = "client.json") -> str:
        return f"https://{host}:{self.port}/{name}"


FETCHES: dict[str, int] = {}
"""How often the document server was asked for each path."""
OWN_ID = ("/client.json", "/uncached.json", "/cached.json")


def document_handler(port: int) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            FETCHES[self.path] = FETCHES.get(self.path, 0) + 1
            host = self.headers["host"].rsplit(":", 1)[0]
            url = f"https://{host}:{port}{self.path}"
            client_id = url if self.path in OWN_ID else "https://other/x"
            body = json.dumps(
                {
                    "client_id": client_id,
                    "client_name": "Metadata assistant",
                    "redirect_uris": [CALLBACK],
                    "token_endpoint_auth_method": "none",
                }
            ).encode()
            if self.path == "/big.json":
                body = body[:-1] + b', "padding": "' + b"x" * 70_000 + b'"}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            cache = "no-store" if self.path == "/uncached.json" else "max-age=60"
            self.send_header("cache-control", cache)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    return Handler


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Documents]:
    ca = trustme.CA()
    directory = tmp_path_factory.mktemp("ca")
    ca_file, served = directory / "ca.pem", directory / "server.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    pem = ca.issue_cert("localhost", LOOPBACK).private_key_and_cert_chain_pem
    pem.write_to_path(str(served))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(served)
    server = ThreadingHTTPServer((LOOPBACK, 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.RequestHandlerClass = document_handler(port)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Documents(port, ca_file)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def trusting(
    tmp_path_factory: pytest.TempPathFactory, documents: Documents
) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("oauth-cimd")
    with oauth_site(
        tmp,
        oauth_trusted_client_hosts=("localhost",),
        oauth_ca_file=str(documents.ca_file),
    ) as site:
        yield site


@pytest.fixture(scope="module")
def guarded(
    tmp_path_factory: pytest.TempPathFactory, documents: Documents
) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("oauth-cimd-guarded")
    with oauth_site(tmp, oauth_ca_file=str(documents.ca_file)) as site:
        yield site


async def test_the_sdk_client_connects_by_its_metadata_document(
    trusting: Site, documents: Documents
) -> None:
    storage = MemoryTokens()
    url = documents.url("localhost")
    auth = provider(trusting, Person(trusting.owner), storage, metadata_url=url)

    calls = await session_calls(trusting, auth)

    assert calls[0] == "oauth:Metadata assistant"
    assert storage.client is not None and storage.client.client_id == url


def refusal_page(site: Site, client_id: str) -> str:
    _, challenge = pkce()
    answer = httpx.get(authorization_url(site, client_id, challenge))
    assert answer.status_code == 400 and "location" not in answer.headers
    assert '<code id="error-code">invalid_client</code>' in answer.text
    return answer.text


def test_an_untrusted_host_on_a_private_address_is_refused(
    guarded: Site, documents: Documents
) -> None:
    assert "private or local address" in refusal_page(
        guarded, documents.url("localhost")
    )
    assert "private or local address" in refusal_page(guarded, documents.url(LOOPBACK))


def test_a_document_naming_another_client_id_is_refused(
    trusting: Site, documents: Documents
) -> None:
    page = refusal_page(trusting, documents.url("localhost", "impostor.json"))
    assert "names another client_id" in page


def test_a_plain_http_client_id_is_not_a_document(trusting: Site) -> None:
    refusal_page(trusting, "http://localhost:1/client.json")


def test_a_document_over_64_kib_is_refused(
    trusting: Site, documents: Documents
) -> None:
    assert "larger than 64 KiB" in refusal_page(
        trusting, documents.url("localhost", "big.json")
    )


def test_a_document_is_cached_as_its_cache_control_says(
    trusting: Site, documents: Documents
) -> None:
    _, challenge = pkce()
    before = (FETCHES.get("/cached.json", 0), FETCHES.get("/uncached.json", 0))
    for name in ("cached.json", "uncached.json"):
        for _ in range(2):
            url = authorization_url(
                trusting, documents.url("localhost", name), challenge
            )
            assert httpx.get(url).status_code == 200
    fetched = (FETCHES["/cached.json"], FETCHES["/uncached.json"])
    assert (fetched[0] - before[0], fetched[1] - before[1]) == (1, 2)
