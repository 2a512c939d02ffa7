"""The webhook sender's SSRF guard at connect time (docs/changes.md#webhooks).

A destination's name is resolved again at each delivery, by the connector's
own resolver: a name whose addresses are not all public is refused before any
connection, unless the host is trusted (whatever the case it was configured
in); an address in the URL is checked without resolving anything.
"""

from collections.abc import Generator
from urllib.parse import urlsplit

import pytest

from app.infra.webhook_sender import REFUSED, HttpWebhookSender
from tests.support.webhook_receiver import Receiver, running_receiver

BODY = b'{"type": "memory.changed"}'
HEADERS = {"content-type": "application/json", "webhook-id": "msg_wh_1_1"}


@pytest.fixture
def receiver() -> Generator[Receiver]:
    with running_receiver() as running:
        yield running


def port_of(receiver: Receiver) -> int:
    port = urlsplit(receiver.url).port
    assert port is not None
    return port


async def test_a_name_resolving_to_loopback_is_refused_before_connecting(
    receiver: Receiver,
) -> None:
    sender = HttpWebhookSender(())
    try:
        named = f"https://localhost:{port_of(receiver)}/hook"
        assert await sender.send(named, HEADERS, BODY) == REFUSED
        literal = f"https://127.0.0.1:{port_of(receiver)}/hook"
        assert await sender.send(literal, HEADERS, BODY) == REFUSED
        plain = f"http://localhost:{port_of(receiver)}/hook"
        assert await sender.send(plain, HEADERS, BODY) == REFUSED
    finally:
        await sender.close()
    assert receiver.all() == []


async def test_a_trusted_name_is_delivered_to_over_plain_http(
    receiver: Receiver,
) -> None:
    sender = HttpWebhookSender(["LocalHost"])
    try:
        named = f"http://localhost:{port_of(receiver)}/hook"
        assert await sender.send(named, HEADERS, BODY) == ""
    finally:
        await sender.close()
    [delivery] = receiver.all()
    assert (delivery.body, delivery.headers["webhook-id"]) == (BODY, "msg_wh_1_1")
