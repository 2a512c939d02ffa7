"""Delivery at its edges: changes pruned before they were sent, several
endpoints in one round, the lease renewed change by change, an enabled
endpoint's schedule, the backoff's cap, the secret's form, a missing id."""

import base64
import json
from collections.abc import Mapping
from datetime import datetime, timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import HistoryRetention
from app.features.memory.tests.conftest import create, make_context
from app.features.webhooks.domain import LEASE, Endpoint, attempt_failed
from app.features.webhooks.domain.delivery import deliver_due
from app.features.webhooks.schemas import WebhookPath
from app.features.webhooks.use_cases.enable_webhook import enable_webhook
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext

from .test_delivery import T0, Clock, Receiver, courier, endpoint_of, registered


def pruning_context(clock: Clock) -> AppContext:
    """Changes kept 100 seconds, written at the clock's time."""
    storage = MemoryStorage(retention=HistoryRetention(changes_seconds=100))
    return make_context(storage=storage, clock=clock)


async def test_changes_pruned_before_delivery_are_skipped_for_the_oldest_kept() -> None:
    clock, receiver = Clock(), Receiver()
    context = pruning_context(clock)
    await create(context, name="before")
    await registered(context)
    await create(context, name="tea")  # pruned before it is delivered
    clock.now = T0 + timedelta(seconds=200)
    await create(context, name="coffee")
    await create(context, name="milk")
    registered_at = (await endpoint_of(context)).cursor

    assert await deliver_due(courier(context, receiver, clock)) == 2

    names = [json.loads(body)["data"]["name"] for _, _, body in receiver.sent]
    assert names == ["coffee", "milk"]
    assert (await endpoint_of(context)).cursor == registered_at + 3


async def test_a_failure_after_pruned_changes_keeps_the_cursor_before_them() -> None:
    clock, receiver = Clock(), Receiver()
    context = pruning_context(clock)
    await create(context, name="before")
    await registered(context)
    registered_at = (await endpoint_of(context)).cursor
    await create(context, name="tea")
    clock.now = T0 + timedelta(seconds=200)
    await create(context, name="coffee")
    await create(context, name="milk")
    receiver.answers = ["status 500"]

    assert await deliver_due(courier(context, receiver, clock)) == 0

    failed = await endpoint_of(context)
    assert (failed.cursor, failed.attempts, failed.last_error) == (
        registered_at + 1,  # coffee is next: tea is not kept
        1,
        "status 500",
    )
    clock.now += timedelta(seconds=5)
    assert await deliver_due(courier(context, receiver, clock)) == 2
    names = [json.loads(body)["data"]["name"] for _, _, body in receiver.sent]
    assert names == ["coffee", "coffee", "milk"]


async def test_a_round_counts_the_changes_sent_to_every_endpoint() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    await registered(context)
    await registered(context)
    await create(context, name="tea")
    await create(context, name="coffee")

    assert await deliver_due(courier(context, receiver, clock)) == 4
    assert len(receiver.sent) == 4


class SlowReceiver(Receiver):
    """Each send takes 20 seconds; it notes the lease as the store holds it."""

    def __init__(self, context: AppContext, clock: Clock) -> None:
        super().__init__()
        self.context, self.clock = context, clock
        self.leases: list[tuple[str, datetime | None]] = []

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> str:
        endpoint = await endpoint_of(self.context)
        self.leases.append((endpoint.lease_holder, endpoint.lease_until))
        self.clock.now += timedelta(seconds=20)
        return await super().send(url, headers, body)


async def test_the_lease_is_taken_then_renewed_after_each_change() -> None:
    clock = Clock()
    context = make_context()
    receiver = SlowReceiver(context, clock)
    await registered(context)
    for name in ("tea", "coffee", "milk"):
        await create(context, name=name)

    assert await deliver_due(courier(context, receiver, clock, holder="a")) == 3

    assert receiver.leases == [
        ("a", T0 + LEASE),
        ("a", T0 + timedelta(seconds=20) + LEASE),
        ("a", T0 + timedelta(seconds=40) + LEASE),
    ]
    done = await endpoint_of(context)
    assert (done.lease_holder, done.lease_until) == ("", None)


async def test_enabling_a_retrying_endpoint_makes_it_due_at_once() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    hook_id, _ = await registered(context)
    await create(context, name="tea")
    receiver.answers = ["down"]
    await deliver_due(courier(context, receiver, clock))
    assert (await endpoint_of(context)).next_attempt_at == T0 + timedelta(seconds=5)

    await enable_webhook(WebhookPath(scope="user", id=hook_id), context)

    resumed = await endpoint_of(context)
    assert (resumed.next_attempt_at, resumed.attempts) == (None, 0)
    assert await deliver_due(courier(context, receiver, clock)) == 1


def test_the_backoff_stops_doubling_after_forty_doublings() -> None:
    endpoint = Endpoint(
        id="wh_1",
        scope="user",
        entity_id="alice",
        url="https://hooks.example.com/",
        description="",
        secret="whsec_x",
        created_at=T0,
        attempts=60,
        failing_since=T0,
    )

    later = attempt_failed(endpoint, "down", T0, base=2**-10, window=1e12)

    assert later.next_attempt_at == T0 + timedelta(seconds=2**30)


async def test_a_secret_is_24_random_bytes_in_base64_after_its_prefix() -> None:
    context = make_context()
    _, first = await registered(context)
    _, second = await registered(context)

    for secret in (first, second):
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 24
    assert first != second


async def test_enabling_an_unknown_id_names_it_and_its_scope() -> None:
    context = make_context()

    with pytest.raises(AppError) as refused:
        await enable_webhook(WebhookPath(scope="user", id="wh_missing"), context)

    assert refused.value.code == "MEMORY_NOT_FOUND"
    assert refused.value.details["scope"] == "user"
    assert refused.value.message.startswith(
        "No webhook wh_missing is registered for the caller in scope user; "
    )


async def test_a_failed_first_change_of_an_empty_log_is_retried_not_skipped() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    await registered(context)  # the log is empty: the endpoint's cursor is 0
    await create(context, name="tea")
    receiver.answers = ["down"]

    assert await deliver_due(courier(context, receiver, clock)) == 0
    pinned = (await endpoint_of(context)).cursor
    clock.now += timedelta(seconds=5)
    assert await deliver_due(courier(context, receiver, clock)) == 1

    done = await endpoint_of(context)
    assert pinned > 0
    assert (done.cursor, done.skipped_at) == (pinned + 1, None)
