"""Client ID Metadata Documents, fetched by the adapter itself from a TLS
server with a test CA: what a document must hold, how long it is kept, and the
SSRF guards (https only, public addresses unless the host is trusted, 64 KiB,
no redirects)."""

import asyncio
import dataclasses
import json
import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import trustme

from app.features.oauth.ports import ClientRecord
from app.infra.memory.oauth_store import MemoryOAuthStore
from app.infra.oauth.client_metadata_documents import (
    MAX_BYTES,
    ClientMetadataDocuments,
    GuardedResolver,
    is_ip_literal,
    is_public,
)
from app.shared.errors.oauth import OAuthError
from tests.mcp_support import LOOPBACK
from tests.support.oauth_context import DAY, Clock

CALLBACK = "http://127.0.0.1:33418/callback"


@dataclass(frozen=True, slots=True)
class Answer:
    body: bytes
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    silent: bool = False
    """Answer nothing: wait (at most 10 s) for the client to close the connection."""
    closed: threading.Event = dataclasses.field(default_factory=threading.Event)
    """Set when a silent answer's client closed the connection."""


def handler(
    answers: dict[str, Answer], fetches: dict[str, int]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetches[self.path] = fetches.get(self.path, 0) + 1
            answer = answers[self.path]
            if answer.silent:
                self.connection.settimeout(10)
                try:
                    gone = self.connection.recv(1) == b""
                except TimeoutError:
                    gone = False
                except OSError:  # a TLS connection cut short says so
                    gone = True
                if gone:
                    answer.closed.set()
                self.close_connection = True
                return
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    return Handler


@dataclass(frozen=True, slots=True)
class Server:
    port: int
    ca_file: Path
    answers: dict[str, Answer]
    """What the document server answers at each path."""
    fetches: dict[str, int]
    """How often each path was asked for."""

    def fetched(self, name: str) -> int:
        return self.fetches.get(f"/{name}", 0)

    def url(self, name: str, host: str = "localhost") -> str:
        return f"https://{host}:{self.port}/{name}"

    def serve(self, name: str, answer: Answer) -> str:
        self.answers[f"/{name}"] = answer
        return self.url(name)

    def document(
        self,
        name: str,
        fields: Mapping[str, object] | None = None,
        *,
        cache: str | None = None,
    ) -> str:
        """Serves a valid document at ``name`` with ``fields`` changed."""
        url = self.url(name)
        document = {"client_id": url, "client_name": "Doc", "redirect_uris": [CALLBACK]}
        headers = () if cache is None else (("cache-control", cache),)
        return self.serve(
            name,
            Answer(
                json.dumps({**document, **(fields or {})}).encode(), headers=headers
            ),
        )

    def documents(
        self,
        clock: Clock | None = None,
        *,
        trusted: tuple[str, ...] = ("localhost",),
        store: MemoryOAuthStore | None = None,
    ) -> ClientMetadataDocuments:
        return ClientMetadataDocuments(
            MemoryOAuthStore() if store is None else store,
            trusted_hosts=trusted,
            ca_file=str(self.ca_file),
            clock=Clock() if clock is None else clock,
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    ca = trustme.CA()
    directory = tmp_path_factory.mktemp("documents-ca")
    ca_file, served = directory / "ca.pem", directory / "server.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    ca.issue_cert("localhost", LOOPBACK).private_key_and_cert_chain_pem.write_to_path(
        str(served)
    )
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(served)
    answers: dict[str, Answer] = {}
    fetches: dict[str, int] = {}
    http = ThreadingHTTPServer((LOOPBACK, 0), handler(answers, fetches))
    http.socket = tls.wrap_socket(http.socket, server_side=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(http.server_address[1], ca_file, answers, fetches)
    finally:
        http.shutdown()
        http.server_close()


PRIVATE = "is on a private or local address"


def refused_for(why: str) -> str:
    return f"The client metadata document {why}."


async def refusal(documents: ClientMetadataDocuments, url: str) -> str:
    with pytest.raises(OAuthError) as refused:
        await documents(url)
    assert refused.value.code == "invalid_client"
    return refused.value.description


async def test_a_document_names_a_public_client(server: Server) -> None:
    clock, store = Clock(), MemoryOAuthStore()
    documents = server.documents(clock, store=store)
    url = server.document(
        "good.json", {"redirect_uris": [CALLBACK, "https://a.example/cb"]}
    )
    client = await documents(url)
    assert client == ClientRecord(
        url, "Doc", (CALLBACK, "https://a.example/cb"), "metadata_document", clock.now
    )
    assert store.get_client(url) == client


@pytest.mark.parametrize(
    ("name", "kept"),
    [(None, ""), (7, ""), ("Tab\there", ""), ("n" * 250, "n" * 200)],
)
async def test_a_client_name_is_printable_text_of_200_characters(
    server: Server, name: object, kept: str
) -> None:
    url = server.document(f"name-{len(server.answers)}.json", {"client_name": name})
    assert (await server.documents()(url)).name == kept


async def test_a_document_is_kept_as_long_as_cache_control_allows(
    server: Server,
) -> None:
    clock = Clock()
    documents = server.documents(clock)
    kept = server.document("kept.json", cache="public, max-age=60")
    capped = server.document("capped.json", cache="max-age=999999")
    for url in (kept, capped):
        await documents(url)
    clock.now += 59.999
    for url in (kept, capped):
        await documents(url)
    assert (server.fetched("kept.json"), server.fetched("capped.json")) == (1, 1)
    clock.now += 0.001
    await documents(kept)
    assert server.fetched("kept.json") == 2
    clock.now += DAY - 60 - 0.001
    await documents(capped)
    assert server.fetched("capped.json") == 1
    clock.now += 0.001
    await documents(capped)
    assert server.fetched("capped.json") == 2  # a day at most, whatever max-age says


@pytest.mark.parametrize(
    "cache",
    [
        None,
        "no-store",
        "no-store, max-age=60",
        "no-cache, max-age=60",
        "max-age=0",
        "private",
    ],
)
async def test_a_document_is_fetched_again_unless_it_may_be_kept(
    server: Server, cache: str | None
) -> None:
    name = "again-" + "".join(c for c in str(cache) if c.isalnum()) + ".json"
    url = server.document(name, cache=cache)
    documents = server.documents()
    await documents(url)
    await documents(url)
    assert server.fetched(name) == 2


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        (
            {"client_id": "https://other.example/x"},
            "names another client_id than its URL",
        ),
        ({"redirect_uris": []}, "lists no redirect_uris"),
        ({"redirect_uris": CALLBACK}, "lists no redirect_uris"),
        ({"redirect_uris": None}, "lists no redirect_uris"),
        (
            {"redirect_uris": [CALLBACK, "http://a.example/cb"]},
            "lists a redirect URI that is not https or loopback http",
        ),
        (
            {"redirect_uris": [CALLBACK, 7]},
            "lists a redirect URI that is not https or loopback http",
        ),
        (
            {"token_endpoint_auth_method": "client_secret_basic"},
            "asks for a client secret; only public clients are served",
        ),
    ],
)
async def test_a_document_must_describe_a_public_client_at_its_own_url(
    server: Server, fields: dict[str, object], why: str
) -> None:
    url = server.document(f"bad-{len(server.answers)}.json", fields)
    store = MemoryOAuthStore()
    assert await refusal(server.documents(store=store), url) == refused_for(why)
    assert store.get_client(url) is None


async def test_an_explicit_public_method_is_accepted(server: Server) -> None:
    url = server.document("none.json", {"token_endpoint_auth_method": "none"})
    assert (await server.documents()(url)).client_id == url


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (Answer(b"not json"), "is not JSON"),
        (Answer(b"[1, 2]"), "is not a JSON object"),
        (Answer(b"{}", status=404), "answered HTTP 404"),
        (
            Answer(b"", status=302, headers=(("location", "https://a.example/"),)),
            "answered HTTP 302",
        ),
    ],
)
async def test_a_document_is_json_answered_200_without_redirect(
    server: Server, answer: Answer, why: str
) -> None:
    url = server.serve(f"answer-{answer.status}-{len(answer.body)}.json", answer)
    assert await refusal(server.documents(), url) == refused_for(why)


async def test_a_document_is_at_most_64_kib(server: Server) -> None:
    largest = server.document("largest.json")
    body = server.answers["/largest.json"].body
    padded = body[:-1] + b" " * (MAX_BYTES - len(body)) + b"}"
    server.serve("largest.json", Answer(padded))
    assert len(padded) == MAX_BYTES
    assert (await server.documents()(largest)).client_id == largest
    server.serve("larger.json", Answer(padded + b" "))
    larger = server.url("larger.json")
    assert await refusal(server.documents(), larger) == refused_for(
        "is larger than 64 KiB"
    )


async def test_a_document_not_answered_within_the_time_limit_is_refused(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fetch gives up at its time limit and closes its connection, even to a
    server that holds it open: an abandoned one would keep its socket open."""
    monkeypatch.setattr(f"{ClientMetadataDocuments.__module__}.TIMEOUT_SECONDS", 0.5)
    url = server.serve("silent", Answer(b"", silent=True))

    assert await refusal(server.documents(), url) == refused_for("could not be fetched")

    assert await asyncio.to_thread(server.answers["/silent"].closed.wait, 10)


@pytest.mark.parametrize(
    "url",
    ["http://localhost/c.json", "https://localhost/c.json#x", "https:///c.json"],
)
async def test_a_document_url_is_https_with_a_host_and_no_fragment(
    server: Server, url: str
) -> None:
    assert await refusal(server.documents(), url) == refused_for(
        "URL must be https without a fragment"
    )


async def test_a_private_address_is_refused_unless_its_host_is_trusted(
    server: Server,
) -> None:
    by_name = server.document("private.json")
    by_address = server.url("private.json", host=LOOPBACK)
    server.answers["/private.json"] = Answer(
        json.dumps({"client_id": by_address, "redirect_uris": [CALLBACK]}).encode()
    )
    untrusted = server.documents(trusted=())
    for url in (by_name, by_address):
        assert await refusal(untrusted, url) == refused_for(PRIVATE)
    assert server.fetched("private.json") == 0
    trusting = server.documents(trusted=("LocalHost", LOOPBACK))
    assert (await trusting(by_address)).client_id == by_address


async def test_a_trusted_ip_literal_is_fetched_whatever_its_case(
    server: Server,
) -> None:
    # the IPv4-mapped form of the server's address: past the address check,
    # its fetch fails (the certificate names 127.0.0.1)
    url = server.url("mapped.json", host="[::ffff:7f00:1]")
    for trusted in (("::FFFF:7F00:1",), ("::ffff:7f00:1",)):
        fetched = await refusal(server.documents(trusted=trusted), url)
        assert fetched == refused_for("could not be fetched")
    assert await refusal(server.documents(trusted=()), url) == refused_for(PRIVATE)


async def test_the_resolver_refuses_a_host_of_a_private_address() -> None:
    guarded = GuardedResolver(trusted=())
    with pytest.raises(OAuthError) as refused:
        await guarded.resolve("localhost", 443)
    assert refused.value.description == refused_for(PRIVATE)
    trusting = GuardedResolver(trusted=("LOCALHOST", "::1"))
    found = await trusting.resolve("localhost", 443)
    assert {result["host"] for result in found} <= {"127.0.0.1", "::1"}
    assert {result["hostname"] for result in found} == {"localhost"}
    # the family asked for is the family resolved
    found = await trusting.resolve("::1", 443, socket.AF_INET6)
    assert [result["host"] for result in found] == ["::1"]
    await asyncio.gather(guarded.close(), trusting.close())


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700::1111", True),
        ("10.1.2.3", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("::1", False),
        ("fe80::1%eth0", False),
        ("ff0e::1", False),  # global multicast
    ],
)
def test_only_a_global_unicast_address_is_public(address: str, public: bool) -> None:
    assert is_public(address) is public


def test_an_ip_literal_is_an_address_not_a_name() -> None:
    assert is_ip_literal("127.0.0.1") and is_ip_literal("::1")
    assert not is_ip_literal("localhost")
