"""A webhook receiver on loopback: records every delivery, fails the first N.

A thread serves it, so synchronous and asynchronous tests both use it; the
test verifies each delivery's signature itself (with ``standardwebhooks``).
"""

import json
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.loopback import LOOPBACK

WAIT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Delivery:
    headers: dict[str, str]
    body: bytes
    answered: int

    @property
    def data(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)["data"]
        return loaded


@dataclass
class Receiver:
    url: str
    failures_left: int = 0
    deliveries: list[Delivery] = field(default_factory=list[Delivery])
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, count: int) -> None:
        with self.lock:
            self.failures_left = count

    def accepted(self) -> list[Delivery]:
        with self.lock:
            return [d for d in self.deliveries if d.answered == 200]

    def all(self) -> list[Delivery]:
        with self.lock:
            return list(self.deliveries)

    def wait_for(
        self, done: Callable[["Receiver"], bool], what: str = "deliveries"
    ) -> None:
        """Until ``done`` holds (a generous bound, not a timed assertion)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not done(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} arrived; got {self.all()}")
            time.sleep(0.05)


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with receiver.lock:
                status = 500 if receiver.failures_left > 0 else 200
                receiver.failures_left -= status == 500
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.deliveries.append(Delivery(headers, body, status))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def running_receiver(path: str = "/hook") -> Generator[Receiver]:
    server = ThreadingHTTPServer((LOOPBACK, 0), _handler(Receiver("")))
    port = server.server_address[1]
    receiver = Receiver(f"http://{LOOPBACK}:{port}{path}")
    server.RequestHandlerClass = _handler(receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
