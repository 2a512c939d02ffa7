"""What the webhook sender makes of each answer, and its resolver on its own.

A receiver on loopback (trusted, so plain http is allowed) answers as each test
needs, in this process: 2xx is a delivery, any other status (3xx included: no
redirect is followed) a failed attempt naming it, no answer within the send
timeout or no listener a failure saying so. The resolver resolves a trusted
host like the system does, in the family and on the port asked, and refuses
the rest with the sender's refusal text. A closed sender opens a new session
when used again.
"""

import asyncio
import socket
from collections.abc import AsyncGenerator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from app.infra import webhook_sender
from app.infra.webhook_sender import (
    REFUSED,
    HttpWebhookSender,
    PublicOnlyResolver,
    RefusedDestination,
)
from tests.support.loopback import LOOPBACK, free_port

BODY = b'{"type": "memory.changed"}'
HEADERS = {"content-type": "application/json"}


class Receiver:
    """Answers ``/status/N`` with N, ``/redirect`` with a 302 to ``/landing``,
    and ``/silent`` never; records every path asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.app = web.Application()
        self.app.router.add_post("/status/{status}", self.status)
        self.app.router.add_post("/redirect", self.redirect)
        self.app.router.add_route("*", "/landing", self.landing)
        self.app.router.add_post("/silent", self.silent)

    async def status(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        return web.Response(status=int(request.match_info["status"]))

    async def redirect(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        raise web.HTTPFound("/landing")

    async def landing(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        return web.Response(status=200)

    async def silent(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        await asyncio.Event().wait()
        raise AssertionError("never answered")


@pytest.fixture
async def receiver() -> AsyncGenerator[tuple[Receiver, str]]:
    answering = Receiver()
    async with TestServer(answering.app, host=LOOPBACK) as server:
        yield answering, str(server.make_url("")).rstrip("/")


@pytest.fixture
async def sender() -> AsyncGenerator[HttpWebhookSender]:
    sending = HttpWebhookSender([LOOPBACK])
    yield sending
    await sending.close()


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        (200, ""),
        (204, ""),
        (299, ""),
        (300, "the receiver answered HTTP 300"),
        (404, "the receiver answered HTTP 404"),
        (503, "the receiver answered HTTP 503"),
    ],
)
async def test_only_a_2xx_answer_is_a_delivery(
    receiver: tuple[Receiver, str],
    sender: HttpWebhookSender,
    status: int,
    answer: str,
) -> None:
    _, base = receiver
    assert await sender.send(f"{base}/status/{status}", HEADERS, BODY) == answer


async def test_a_redirect_is_a_failed_attempt_and_not_followed(
    receiver: tuple[Receiver, str], sender: HttpWebhookSender
) -> None:
    answering, base = receiver
    answer = await sender.send(f"{base}/redirect", HEADERS, BODY)
    assert (answer, answering.paths) == (
        "the receiver answered HTTP 302",
        ["/redirect"],
    )


async def test_no_answer_within_the_send_timeout_is_a_failed_attempt(
    receiver: tuple[Receiver, str],
    sender: HttpWebhookSender,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(webhook_sender, "SEND_TIMEOUT_SECONDS", 0.2)
    _, base = receiver
    async with asyncio.timeout(10):  # a bound on the test, not a measurement
        answer = await sender.send(f"{base}/silent", HEADERS, BODY)
    assert answer == "no answer within 0.2 s"


async def test_no_listener_is_a_failed_connection_not_a_refusal(
    sender: HttpWebhookSender,
) -> None:
    url = f"http://{LOOPBACK}:{free_port()}/hook"
    answer = await sender.send(url, HEADERS, BODY)
    assert answer == "could not connect: ClientConnectorError"


async def test_a_closed_sender_delivers_again_and_closes_again(
    receiver: tuple[Receiver, str], sender: HttpWebhookSender
) -> None:
    answering, base = receiver
    assert await sender.send(f"{base}/status/200", HEADERS, BODY) == ""
    await sender.close()
    assert await sender.send(f"{base}/status/204", HEADERS, BODY) == ""
    await sender.close()
    assert answering.paths == ["/status/200", "/status/204"]


def test_an_untrusted_destination_is_refused_unless_https_to_a_public_host() -> None:
    """Addresses in the URL are judged at once; a name only when resolved."""
    sender = HttpWebhookSender(["Hooks.Example.Test"])
    refusals = {
        url: sender.refusal(url)
        for url in (
            "https://1.1.1.1/hook",
            "https://[2606:4700:4700::1111]/hook",
            "https://example.com/hook",
            "http://1.1.1.1/hook",
            "http://example.com/hook",
            "https://10.0.0.1/hook",
            "https://[::1]/hook",
            "http://hooks.example.test/hook",
        )
    }
    assert refusals == {
        "https://1.1.1.1/hook": "",
        "https://[2606:4700:4700::1111]/hook": "",
        "https://example.com/hook": "",
        "http://1.1.1.1/hook": REFUSED,
        "http://example.com/hook": REFUSED,
        "https://10.0.0.1/hook": REFUSED,
        "https://[::1]/hook": REFUSED,
        "http://hooks.example.test/hook": "",
    }


async def test_the_resolver_resolves_a_trusted_host_as_asked() -> None:
    """In the family and on the port the connector asks (port 0 by default): an
    IPv4 address asked for as IPv6 is not found."""
    resolver = PublicOnlyResolver({"127.0.0.2"})
    try:
        [asked] = await resolver.resolve("127.0.0.2", 443, socket.AF_UNSPEC)
        [default] = await resolver.resolve("127.0.0.2")
        with pytest.raises(OSError):
            await resolver.resolve("127.0.0.2", 443, socket.AF_INET6)
    finally:
        await resolver.close()
    assert (asked["hostname"], asked["host"], asked["port"], asked["family"]) == (
        "127.0.0.2",
        "127.0.0.2",
        443,
        socket.AF_INET,
    )
    assert (default["host"], default["port"]) == ("127.0.0.2", 0)


async def test_the_resolver_refuses_an_untrusted_loopback_name() -> None:
    resolver = PublicOnlyResolver(set())
    try:
        with pytest.raises(RefusedDestination) as raised:
            await resolver.resolve("localhost", 443)
    finally:
        await resolver.close()
    assert str(raised.value) == REFUSED
