"""A precondition proxy in front of fake-gcs-server, which ignores some preconditions.

fake-gcs-server 1.54 enforces ``ifGenerationMatch`` only on JSON multipart
uploads; it ignores it on DELETE, on ``uploadType=media`` uploads and on
resumable uploads (observed against the emulator). This proxy forwards
every request unchanged, except that each mutating request runs under one lock
and, for those three kinds, the proxy reads the object's current generation and
answers 412 itself when ``ifGenerationMatch``, ``ifGenerationNotMatch``,
``ifMetagenerationMatch`` or ``ifMetagenerationNotMatch`` fails — as GCS does.
Resumable uploads are checked when they start and again on every chunk.
fake-gcs-server also ignores ``generation`` on a DELETE (it deletes the live
object, leaving the asked-for generation): the proxy erases one generation as
GCS does, hiding it from listings and reads from then on (``ProxyState.erased``).
It ignores ``fields`` too: the proxy cuts each JSON answer down to the fields
its request selects, and refuses a selector GCS could not parse (``gcs_fields``).
And it stores custom metadata of any size: the proxy refuses, as GCS does, a
mutation whose custom metadata passes 8 KiB (keys and values, UTF-8).

It can also stage an outage: ``interrupt()`` closes the port and resets open
connections (clients see refused connections), ``resume()`` serves again; and
``throttle(n)`` answers the next n mutations with 429 (GCS's per-object limit);
``limit_rate(s)`` answers 429 to mutations closer than s seconds together.
``lose_answer(suffix)`` stages an unlucky network: the next mutation of an object
whose name ends with ``suffix`` lands, and then its answer is lost (the
connection closes) or held back for ``hold`` seconds, past the client's patience;
optionally the proxy then stops answering anything until ``answer_again()``.

Run standalone: ``python -m tests.support.gcs_proxy LISTEN_PORT UPSTREAM_PORT``.
"""

import http.client
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.support.gcs_fields import BadSelector, parse, select
from tests.support.loopback import LOOPBACK

UPSTREAM_TIMEOUT_SECONDS = 60.0
CONDITIONS = (
    "ifGenerationMatch",
    "ifGenerationNotMatch",
    "ifMetagenerationMatch",
    "ifMetagenerationNotMatch",
)
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
_NAME_IN_BODY = re.compile(rb'"name":\s*("(?:[^"\\]|\\.)*")')
PRECONDITION_FAILED = json.dumps(
    {
        "error": {
            "code": 412,
            "message": "At least one of the pre-conditions you specified did not hold.",
            "errors": [{"domain": "global", "reason": "conditionNotMet"}],
        }
    }
).encode()


BAD_SELECTOR = json.dumps(
    {
        "error": {
            "code": 400,
            "message": "Invalid field selection",
            "errors": [{"domain": "global", "reason": "invalidParameter"}],
        }
    }
).encode()


METADATA_LIMIT_BYTES = 8192
METADATA_TOO_LARGE = json.dumps(
    {
        "error": {
            "code": 400,
            "message": "Metadata part is too large.",
            "errors": [{"domain": "global", "reason": "invalid"}],
        }
    }
).encode()


NOT_FOUND = json.dumps(
    {"error": {"code": 404, "message": "No such object.", "errors": []}}
).encode()


RATE_LIMITED = json.dumps(
    {
        "error": {
            "code": 429,
            "message": "The object exceeded the rate limit for object mutation.",
            "errors": [{"domain": "usageLimits", "reason": "rateLimitExceeded"}],
        }
    }
).encode()


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


@dataclass(frozen=True, slots=True)
class Target:
    """The object a guarded request changes and the preconditions it carries."""

    bucket: str
    name: str
    conditions: Mapping[str, int]


@dataclass
class ProxyState:
    """What outlives one listening socket: the lock, uploads, open connections."""

    upstream_host: str
    upstream_port: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    uploads: dict[str, Target] = field(default_factory=dict[str, Target])
    connections: set[socket.socket] = field(default_factory=set[socket.socket])
    down: bool = False
    throttled: int = 0
    min_interval: float = 0.0
    last_mutation: float = float("-inf")
    rate_limited: int = 0
    lose_suffix: str | None = None
    lose_hold: float = 0.0
    lose_then_down: bool = False
    lost: int = 0
    erased: set[tuple[str, str, str]] = field(default_factory=set[tuple[str, str, str]])
    """(bucket, name, generation) erased by a DELETE naming its generation."""


def holds(conditions: Mapping[str, int], current: Mapping[str, Any] | None) -> bool:
    """Whether GCS would accept a request with ``conditions`` on ``current``."""
    generation = int(current["generation"]) if current else 0
    metageneration = int(current["metageneration"]) if current else None
    for name, value in conditions.items():
        if name == "ifGenerationMatch" and generation != value:
            return False
        if name == "ifGenerationNotMatch" and (current is None or generation == value):
            return False
        if name == "ifMetagenerationMatch" and metageneration != value:
            return False
        if name == "ifMetagenerationNotMatch" and metageneration in (None, value):
            return False
    return True


def _conditions(query: Mapping[str, list[str]]) -> dict[str, int]:
    return {name: int(query[name][-1]) for name in CONDITIONS if name in query}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def state(self) -> ProxyState:
        return cast(_ProxyServer, self.server).state

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def setup(self) -> None:
        super().setup()
        self.state.connections.add(self.connection)

    def finish(self) -> None:
        self.state.connections.discard(self.connection)
        super().finish()

    def do_GET(self) -> None:
        state = self.state
        if state.down:
            self.close_connection = True
            return
        body = self._body()
        if self.command in ("GET", "HEAD"):
            self._reply(self._partial(self._without_erased(self._forward(body))))
            return
        erasing = self._erasing()
        if erasing is not None:
            with state.lock:
                self._reply(self._erase(erasing))
            return
        lose = False
        with state.lock:
            target = self._target(body)
            current = self._current(target) if target else None
            now = time.monotonic()
            if state.throttled > 0 or now - state.last_mutation < state.min_interval:
                state.throttled = max(0, state.throttled - 1)
                state.rate_limited += 1
                reply = Reply(429, "Too Many Requests", [], RATE_LIMITED)
            elif target is not None and not self._passes(target, current):
                reply = Reply(412, "Precondition Failed", [], PRECONDITION_FAILED)
            elif self._metadata_bytes(body) > METADATA_LIMIT_BYTES:
                reply = Reply(400, "Bad Request", [], METADATA_TOO_LARGE)
            else:
                reply = self._forward(body)
                state.last_mutation = now
                self._remember_upload(target, reply)
                lose = reply.status < 300 and self._loses(body)
        if lose:
            # The mutation landed; its answer never arrives, or arrives too late.
            if not state.lose_hold:
                self.close_connection = True
                return
            time.sleep(state.lose_hold)
        self._reply(reply)

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _erasing(self) -> tuple[str, str, str] | None:
        """(bucket, name, generation) of a DELETE of one generation, else None."""
        url = urlsplit(self.path)
        parts = url.path.split("/")
        generation = parse_qs(url.query).get("generation")
        if self.command != "DELETE" or not generation or len(parts) < 7:
            return None
        return unquote(parts[4]), unquote("/".join(parts[6:])), generation[-1]

    def _erase(self, erasing: tuple[str, str, str]) -> Reply:
        """Erase that generation, live or noncurrent, as GCS does (404 if none)."""
        bucket, name, generation = erasing
        path = f"/storage/v1/b/{quote(bucket, safe='')}/o"
        query = f"?versions=true&prefix={quote(name, safe='')}"
        listed = self._upstream("GET", path + query, b"", {})
        page: dict[str, Any] = json.loads(listed.body) if listed.status == 200 else {}
        items: list[dict[str, Any]] = page.get("items", [])
        found = [
            item
            for item in items
            if item["name"] == name and str(item["generation"]) == generation
        ]
        if not found or erasing in self.state.erased:
            return Reply(404, "Not Found", [], NOT_FOUND)
        if not found[0].get("timeDeleted"):  # the live one: delete it too
            self._upstream("DELETE", path + "/" + quote(name, safe=""), b"", {})
        self.state.erased.add(erasing)
        return Reply(204, "No Content", [], b"")

    def _without_erased(self, reply: Reply) -> Reply:
        """A read or listing as GCS gives it once erased generations are gone."""
        url = urlsplit(self.path)
        parts = url.path.split("/")
        erased = self.state.erased
        if reply.status != 200 or not erased or parts[1:4] != ["storage", "v1", "b"]:
            return reply
        bucket, query = unquote(parts[4]), parse_qs(url.query)
        if len(parts) >= 7 and "generation" in query:
            name = unquote("/".join(parts[6:]))
            if (bucket, name, query["generation"][-1]) in erased:
                return Reply(404, "Not Found", [], NOT_FOUND)
            return reply
        if len(parts) != 6 or parts[5] != "o":
            return reply
        page = json.loads(reply.body)
        page["items"] = [
            item
            for item in page.get("items", [])
            if (bucket, item["name"], str(item["generation"])) not in erased
        ]
        return Reply(
            reply.status, reply.reason, reply.headers, json.dumps(page).encode()
        )

    def _partial(self, reply: Reply) -> Reply:
        """``reply`` cut down to the ``fields`` its request names, as GCS does."""
        selector = parse_qs(urlsplit(self.path).query).get("fields")
        if not selector:
            return reply
        try:
            selection = parse(selector[-1])
        except BadSelector:
            return Reply(400, "Bad Request", [], BAD_SELECTOR)
        if reply.status != 200 or not reply.body.startswith(b"{"):
            return reply
        body = json.dumps(select(json.loads(reply.body), selection)).encode()
        return Reply(reply.status, reply.reason, reply.headers, body)

    def _loses(self, body: bytes) -> bool:
        """Whether this mutation's answer is the one ``lose_answer`` staged."""
        state = self.state
        name = self._object_name(body)
        if state.lose_suffix is None or name is None:
            return False
        if not name.endswith(state.lose_suffix):
            return False
        state.lose_suffix = None
        state.lost += 1
        state.down = state.lose_then_down
        return True

    def _metadata_bytes(self, body: bytes) -> int:
        """The size GCS counts of the custom metadata a mutation's JSON (or the JSON
        part of a multipart upload) sets: every key and value, UTF-8; 0 if none."""
        kind = self.headers.get("Content-Type", "")
        start = body.find(b"{")
        if start < 0 or not ("json" in kind or "multipart" in kind):
            return 0
        try:
            resource: object = json.JSONDecoder().raw_decode(body[start:].decode())[0]
        except (UnicodeDecodeError, ValueError):
            return 0
        if not isinstance(resource, dict):
            return 0
        metadata = cast(dict[str, object], resource).get("metadata")
        if not isinstance(metadata, dict):
            return 0
        pairs = cast(dict[str, object], metadata).items()
        return sum(len(k.encode()) + len(str(v or "").encode()) for k, v in pairs)

    def _object_name(self, body: bytes) -> str | None:
        url = urlsplit(self.path)
        parts = url.path.split("/")
        if self.command == "DELETE" and len(parts) >= 7:
            return unquote("/".join(parts[6:]))
        named = parse_qs(url.query).get("name")
        if named:
            return named[-1]
        found = _NAME_IN_BODY.search(body)
        return str(json.loads(found.group(1))) if found else None

    def _passes(self, target: Target, current: Mapping[str, Any] | None) -> bool:
        # GCS answers 404 to a DELETE of a missing object, whatever it asked for.
        if self.command == "DELETE" and current is None:
            return True
        return holds(target.conditions, current)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while size := int(self.rfile.readline().split(b";")[0], 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _target(self, body: bytes) -> Target | None:
        """The guarded object of a DELETE, media or resumable upload, else None."""
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        parts = url.path.split("/")
        upload = query.get("uploadType", [""])[-1]
        if self.command == "DELETE" and parts[1:4] == ["storage", "v1", "b"]:
            if len(parts) >= 7 and parts[5] == "o":
                name = unquote("/".join(parts[6:]))
                return Target(unquote(parts[4]), name, _conditions(query))
            return None
        if parts[1:5] != ["upload", "storage", "v1", "b"] or len(parts) < 6:
            return None
        if "upload_id" in query:
            return self.state.uploads.get(query["upload_id"][-1])
        if upload == "media":
            return Target(unquote(parts[5]), query["name"][-1], _conditions(query))
        if upload == "resumable":
            name = query.get("name", [""])[-1] or json.loads(body or b"{}")["name"]
            return Target(unquote(parts[5]), name, _conditions(query))
        return None

    def _current(self, target: Target) -> dict[str, Any] | None:
        path = f"/storage/v1/b/{quote(target.bucket, safe='')}/o/"
        reply = self._upstream("GET", path + quote(target.name, safe=""), b"", {})
        if reply.status == 404:
            return None
        found: dict[str, Any] = json.loads(reply.body)
        return found

    def _remember_upload(self, target: Target | None, reply: Reply) -> None:
        location = dict((k.lower(), v) for k, v in reply.headers).get("location")
        if target is not None and location and reply.status < 300:
            upload_id = parse_qs(urlsplit(location).query).get("upload_id")
            if upload_id:
                self.state.uploads[upload_id[-1]] = target

    def _forward(self, body: bytes) -> Reply:
        headers = {
            key: value
            for key, value in self.headers.items()
            if key.lower() not in HOP_BY_HOP
        }
        return self._upstream(self.command, self.path, body, headers)

    def _upstream(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str]
    ) -> Reply:
        state = self.state
        connection = http.client.HTTPConnection(
            state.upstream_host, state.upstream_port, timeout=UPSTREAM_TIMEOUT_SECONDS
        )
        try:
            connection.request(method, path, body=body, headers=dict(headers))
            response = connection.getresponse()
            return Reply(
                response.status, response.reason, response.getheaders(), response.read()
            )
        finally:
            connection.close()

    def _reply(self, reply: Reply) -> None:
        self.send_response(reply.status, reply.reason)
        for key, value in reply.headers:
            if key.lower() not in HOP_BY_HOP | {"date", "server"}:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, state: ProxyState) -> None:
        self.state = state
        super().__init__((LOOPBACK, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (its timeout, or an outage this proxy staged)
        # closes its socket before the answer; that is expected, not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class PreconditionProxy:
    """The proxy on a loopback port, served from a background thread."""

    def __init__(self, upstream_port: int, *, port: int = 0) -> None:
        self._state = ProxyState(LOOPBACK, upstream_port)
        self._server = _ProxyServer(port, self._state)
        self.port: int = self._server.server_address[1]
        self._thread: threading.Thread | None = None
        self._serving = False

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}
        )
        self._thread.daemon = True
        self._thread.start()
        self._serving = True

    def _close(self) -> None:
        if not self._serving:
            return
        self._serving = False
        self._server.shutdown()
        self._server.server_close()
        for connection in list(self._state.connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                continue  # already closed by its handler
        if self._thread is not None:
            self._thread.join()

    def throttle(self, count: int) -> None:
        """Answer the next ``count`` mutations with 429, as GCS does past about
        one write per second to an object; nothing reaches the emulator."""
        with self._state.lock:
            self._state.throttled = count

    def limit_rate(self, min_interval: float) -> None:
        """Answer 429 to a mutation sooner than ``min_interval`` seconds after the
        last one let through, as GCS does to a hot object (about one write per
        second; tests scale the interval down). 0 lifts the limit."""
        with self._state.lock:
            self._state.min_interval = min_interval
            self._state.rate_limited = 0

    @property
    def rate_limited(self) -> int:
        """How many mutations were answered 429 since the last limit_rate()."""
        return self._state.rate_limited

    def lose_answer(
        self, suffix: str | None, *, hold: float = 0.0, then_down: bool = False
    ) -> None:
        """Let the next mutation of an object named ``...suffix`` land, then lose
        its answer: close the connection (hold 0) or answer after ``hold`` s;
        ``then_down`` closes every later request unanswered until
        ``answer_again()``. None stages nothing."""
        with self._state.lock:
            self._state.lose_suffix = suffix
            self._state.lose_hold = hold
            self._state.lose_then_down = then_down

    def answer_again(self) -> None:
        """Answer requests again after ``lose_answer(..., then_down=True)``."""
        self._state.down = False

    @property
    def lost(self) -> int:
        """How many answers ``lose_answer`` has lost so far."""
        return self._state.lost

    def interrupt(self) -> None:
        """Refuse connections and reset open ones, as a stopped backend would."""
        self._state.down = True
        self._close()

    def resume(self) -> None:
        """Serve again on the same port."""
        self._server = _ProxyServer(self.port, self._state)
        self._state.down = False
        self.start()

    def stop(self) -> None:
        self._state.down = True
        self._close()


def main(argv: list[str]) -> int:
    listen, upstream = int(argv[0]), int(argv[1])
    proxy = PreconditionProxy(upstream, port=listen)
    print(f"precondition proxy on {proxy.url} -> {LOOPBACK}:{upstream}", flush=True)
    proxy.start()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        proxy.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
