"""Fuzzing the HTTP surface of a live ``wenchang serve`` (uvicorn on loopback).

Schemathesis generates requests for every operation in the server's own
``/openapi.json``, with a valid bearer token, and checks each answer: never a
5xx, and status, content type, headers and body exactly as documented. The
hostile cases below are sent byte for byte over a socket, so no client library
normalises them first. Afterwards the server must still be healthy and its
output must hold no traceback.

``WENCHANG_FUZZ_EXAMPLES`` sets the cases per operation (default 25 in CI;
the README's full mode uses 500).
"""

import json
import os
import socket
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy
from schemathesis import BaseSchema, GenerationMode, checks

from app.infra.tokens.token_file import create_token
from app.server.http.openapi_document import published
from app.shared.identity import Grant
from tests.support.server import ServerProcess, running_server

EXAMPLES = int(os.environ.get("WENCHANG_FUZZ_EXAMPLES", "25"))
# Schemathesis types its checks over a generic Case that pyright cannot resolve.
CHECKS: list[Any] = [
    getattr(checks, name)
    for name in (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    )
]
GRANTS = {"user": Grant("alice", "owner"), "team": Grant("t-1", "member")}
SEEDED = "/v1/files/user/notes/tea"
SNAPSHOT = Path(__file__).resolve().parent.parent / "openapi.json"

fuzz_cases: Counter[str] = Counter()


@dataclass(frozen=True, slots=True)
class Live:
    server: ServerProcess
    auth: dict[str, str]

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.url.removeprefix("http://").split(":")
        return host, int(port)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Generator[Live]:
    """One server for the module, with a token and one seeded file."""
    root = tmp_path_factory.mktemp("fuzz")
    secret, _ = create_token(root / "wenchang-tokens.json", GRANTS, label="fuzz")
    settings_ = {
        "WENCHANG_STORAGE": f"sqlite:///{root / 'wenchang.db'}",
        "WENCHANG_RATE_LIMIT": "0",
        "WENCHANG_MAX_FILE_BYTES": "4096",
    }
    with running_server(root, logs=root / "logs", settings=settings_) as server:
        auth = {"Authorization": f"Bearer {secret}"}
        seeded = httpx.put(
            f"{server.url}{SEEDED}",
            json={"content": "- [stated] Tea\n", "description": "d", "aliases": []},
            headers=auth | {"If-None-Match": "*"},
        )
        assert seeded.status_code == 201, seeded.text
        yield Live(server, auth)
        output = server.stdout() + server.stderr()
    assert "Traceback" not in output, output


@pytest.fixture(scope="module")
def api_schema(live: Live) -> BaseSchema:
    """The live server's own schema; it must be the committed snapshot as
    published (with its licence and relative server)."""
    served = schemathesis.openapi.from_url(f"{live.server.url}/openapi.json")
    assert served.raw_schema == published(json.loads(SNAPSHOT.read_text()))
    return served


def documented_operations() -> list[str]:
    document = json.loads(SNAPSHOT.read_text())
    return [
        f"{method.upper()} {path}"
        for path, methods in document["paths"].items()
        if path.startswith("/v1/")
        for method in methods
    ]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("label", documented_operations())
def test_every_operation_answers_within_its_documented_schema(
    api_schema: Any, live: Live, label: str, mode: GenerationMode
) -> None:
    """Valid and invalid input alike: no 5xx, and only documented answers."""
    operation: Any = api_schema.find_operation_by_label(label)
    assert operation is not None, label
    cases: SearchStrategy[Any] = operation.as_strategy(generation_mode=mode)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much),
    )
    @given(case=cases)
    def fuzz(case: Any) -> None:
        fuzz_cases[f"{label} ({mode.value})"] += 1
        case.call_and_validate(headers=live.auth, checks=CHECKS)

    fuzz()


def raw(live: Live, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` exactly as given; the status and body of the answer."""
    with socket.create_connection(live.address, timeout=10) as connection:
        connection.sendall(request)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head else 0
    fuzz_cases["hostile"] += 1
    return status, body


def request_bytes(
    live: Live,
    method: str,
    target: str,
    *,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    authorized: bool = True,
) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    fields = (live.auth if authorized else {}) | (headers or {})
    lines += [f"{name}: {value}" for name, value in fields.items()]
    if (body or method in ("PUT", "POST")) and "Content-Length" not in fields:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def answer(live: Live, method: str, target: str, **options: Any) -> int:
    status, _ = raw(live, request_bytes(live, method, target, **options))
    return status


PATH_ATTACKS = [
    "/v1/files/user/../system/rules",
    "/v1/files/user/notes/..",
    "/v1/files/user/notes/%2e%2e",
    "/v1/files/user/notes/%2E%2E%2Fetc%2Fpasswd",
    "/v1/files/user/%2e%2e/tea",
    "/v1/files/user/notes/..%5C..%5Csecret",
    "/v1/files/user/notes/a%00b",
    "/v1/files/user/notes/a%0Ab",
    "/v1/files/user/notes/a%07b",
    "/v1/files/user/notes/a%E2%80%8Bb",
    "/v1/files/..%2Fteam/notes/tea",
    "/v1/files/%2e/notes/tea",
    "//v1/files/user/notes/tea",
    "/v1/files/user/notes/tea%2F..%2F..%2Fsystem%2Frules",
]


@pytest.mark.parametrize("target", PATH_ATTACKS)
def test_path_traversal_never_escapes_and_never_fails(live: Live, target: str) -> None:
    """Dot segments, encoded separators, NUL and controls: a 4xx, never a 5xx."""
    statuses = [
        answer(live, "GET", target),
        answer(
            live,
            "PUT",
            target,
            body=b'{"content":"x","description":"","aliases":[]}',
            headers={"Content-Type": "application/json", "If-None-Match": "*"},
        ),
    ]

    assert all(400 <= status < 500 for status in statuses), statuses


def test_invalid_utf8_in_a_path_is_refused_and_creates_nothing(live: Live) -> None:
    """Undecodable bytes are INVALID_ARGUMENT on their segment, never U+FFFD."""
    put = answer(
        live,
        "PUT",
        "/v1/files/user/notes/%FF%FE",
        body=b'{"content":"x","description":"","aliases":[]}',
        headers={"Content-Type": "application/json", "If-None-Match": "*"},
    )
    listing = httpx.get(f"{live.server.url}/v1/files/user/notes", headers=live.auth)

    assert put == 422
    names = [entry["name"] for entry in listing.json()["entries"]]
    assert not any("\ufffd" in name for name in names)


LOOK_ALIKES = [
    "\u0455ystem",  # Cyrillic dze
    "\uff53\uff59\uff53\uff54\uff45\uff4d",  # fullwidth
    "SYSTEM",
    "system\u200b",
    "sys\u00adtem",
    "syst\u0435m",  # Cyrillic ie
    "system.",
    "system%20",
]


@pytest.mark.parametrize("area", LOOK_ALIKES)
def test_look_alikes_of_system_are_refused_as_areas(live: Live, area: str) -> None:
    """Only the exact slug ``system`` is curated; a look-alike is no area at all."""
    target = "/v1/files/user/" + _quote(area) + "/rules"
    body = json.dumps({"content": "x", "description": "", "aliases": []}).encode()

    status, reply = raw(
        live,
        request_bytes(
            live,
            "PUT",
            target,
            body=body,
            headers={"Content-Type": "application/json", "If-None-Match": "*"},
        ),
    )

    assert status == 422, reply
    assert json.loads(reply)["details"]["argument"] == "area"


def _quote(text: str) -> str:
    return "".join(
        char if char.isascii() and char.isalnum() else f"%{byte:02X}"
        for char in text
        for byte in (char.encode() if not (char.isascii() and char.isalnum()) else [0])
    )


def nested(depth: int) -> bytes:
    return (
        b'{"content":'
        + b"[" * depth
        + b"]" * depth
        + b',"description":"","aliases":[]}'
    )


BODY_ATTACKS = {
    "deep": (nested(100_000), "application/json"),
    "deep-object": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "application/json"),
    "invalid-utf8": (
        b'{"content":"\xff\xfe\xc3(","description":"","aliases":[]}',
        "application/json",
    ),
    "lone-surrogate": (
        b'{"content":"\\ud800","description":"","aliases":[]}',
        "application/json",
    ),
    "not-json": (b"content=x", "application/x-www-form-urlencoded"),
    "text": (b'{"content":"x","description":"","aliases":[]}', "text/plain"),
    "xml": (b"<content>x</content>", "application/xml"),
    "multipart": (b"--b\r\n\r\nx\r\n--b--\r\n", "multipart/form-data; boundary=b"),
    "empty": (b"", "application/json"),
    "array": (b"[]", "application/json"),
    "nan": (b'{"content":NaN,"description":"","aliases":[]}', "application/json"),
}


@pytest.mark.parametrize("name", sorted(BODY_ATTACKS))
def test_hostile_bodies_are_refused_without_a_server_error(
    live: Live, name: str
) -> None:
    """Huge, deeply nested, mistyped and malformed bodies: 4xx on every mutation."""
    body, content_type = BODY_ATTACKS[name]
    headers = {"Content-Type": content_type}

    statuses = [
        answer(
            live,
            "PUT",
            "/v1/files/user/notes/fuzzed",
            body=body,
            headers=headers | {"If-None-Match": "*"},
        ),
        answer(
            live,
            "POST",
            f"{SEEDED}/lines",
            body=body,
            headers=headers | {"If-Match": '"0"'},
        ),
        answer(
            live,
            "POST",
            f"{SEEDED}/replace",
            body=body,
            headers=headers | {"If-Match": '"0"'},
        ),
    ]

    assert all(400 <= status < 500 for status in statuses), statuses


def test_nul_and_controls_in_text_fields_round_trip_exactly(live: Live) -> None:
    """Content and metadata are opaque text: stored and returned byte for byte."""
    body = {"content": "a\x00b\x01\x7f", "description": "\x00d", "aliases": ["\x00"]}
    url = f"{live.server.url}/v1/files/user/notes/controls"

    put = httpx.put(url, json=body, headers=live.auth | {"If-None-Match": "*"})
    stored = httpx.get(url, headers=live.auth).json()

    assert put.status_code == 201, put.text
    assert {key: stored[key] for key in body} == body


def test_a_body_over_the_limit_is_refused_from_its_length_alone(live: Live) -> None:
    """413 as soon as Content-Length is read: the server never buffers the body."""
    head = request_bytes(
        live,
        "PUT",
        "/v1/files/user/notes/huge",
        headers={
            "Content-Type": "application/json",
            "If-None-Match": "*",
            "Content-Length": "2000000",
        },
    )

    status, _ = raw(live, head)

    assert status == 413


def test_duplicate_json_keys_take_the_last_value(live: Live) -> None:
    """Ordinary JSON semantics (the last duplicate wins), not an error."""
    body = b'{"content":"a","content":"b","description":"","aliases":[]}'

    put = answer(
        live,
        "PUT",
        "/v1/files/user/notes/duplicates",
        body=body,
        headers={"Content-Type": "application/json", "If-None-Match": "*"},
    )
    stored = httpx.get(
        f"{live.server.url}/v1/files/user/notes/duplicates", headers=live.auth
    )

    assert put == 201
    assert stored.json()["content"] == "b"


MALFORMED_ETAGS = [
    "*",
    'W/"abc"',
    '"a", "b"',
    "abc",
    '"',
    '""',
    '"a b"',
    '"' + "a" * 300 + '"',
    '"\x01"',
    '"caf\xe9"',
    "\t",
]


@pytest.mark.parametrize("etag", MALFORMED_ETAGS)
def test_malformed_etags_are_request_syntax_errors(live: Live, etag: str) -> None:
    """A malformed If-Match is 422 (or 400 from the HTTP parser), never a 5xx."""
    statuses = [
        answer(live, "DELETE", SEEDED, headers={"If-Match": etag}),
        answer(
            live,
            "POST",
            f"{SEEDED}/lines",
            body=b'{"line":"- [stated] x"}',
            headers={"If-Match": etag, "Content-Type": "application/json"},
        ),
    ]

    assert all(status in (400, 422) for status in statuses), statuses


HEADER_ATTACKS = {
    "oversized-header": {"X-Filler": "a" * 200_000},
    "many-headers": {f"X-H{n}": "v" for n in range(5_000)},
    "oversized-authorization": {"Authorization": "Bearer " + "a" * 100_000},
    "bearer-with-controls": {"Authorization": "Bearer \x01\x02"},
    "basic-auth": {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    "huge-content-length": {"Content-Length": "99999999999999999999"},
    "negative-content-length": {"Content-Length": "-1"},
    "bad-idempotency-key": {"Idempotency-Key": "../../etc"},
    "long-idempotency-key": {"Idempotency-Key": "k" * 500},
}


@pytest.mark.parametrize("name", sorted(HEADER_ATTACKS))
def test_hostile_headers_get_a_client_error(live: Live, name: str) -> None:
    """Oversized, numerous, malformed headers: a 4xx (or a closed connection)."""
    headers = HEADER_ATTACKS[name]
    authorized = "Authorization" not in headers

    try:
        status = answer(live, "PUT", SEEDED, headers=headers, authorized=authorized)
    except ConnectionError:
        status = 400  # the parser may close the connection instead of answering

    assert 400 <= status < 500 or status == 0, status


def test_the_server_is_healthy_after_the_fuzzing(live: Live) -> None:
    """Nothing above took the server down or poisoned it for later callers."""
    answers = [
        httpx.get(f"{live.server.url}/health").status_code,
        httpx.get(f"{live.server.url}{SEEDED}", headers=live.auth).status_code,
    ]

    assert answers == [200, 200]
    print(f"\nfuzz: {fuzz_cases.total()} cases {dict(fuzz_cases)}")
