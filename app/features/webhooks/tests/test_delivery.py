"""A delivery round over the in-memory store and change feed: what is sent,
signed as Standard Webhooks says, and how the endpoint's state moves."""

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from app.features.changes.schemas import ReadChanges
from app.features.changes.use_cases.read_changes import read_changes
from app.features.memory.domain import format_timestamp
from app.features.memory.ports import ChangeFeed, HistoryRetention
from app.features.memory.tests.conftest import CURSOR_KEY, create, make_context
from app.features.webhooks.domain import Endpoint, leased
from app.features.webhooks.domain.delivery import Courier, deliver_due
from app.features.webhooks.policy import WebhookPolicy
from app.features.webhooks.schemas import AddWebhook, WebhookPath, WebhookScope
from app.features.webhooks.use_cases.add_webhook import add_webhook
from app.features.webhooks.use_cases.enable_webhook import enable_webhook
from app.features.webhooks.use_cases.list_webhooks import list_webhooks
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext

HOOK = "https://hooks.example.com/wenchang"
T0 = datetime(2026, 3, 2, 9, 0, 0, 250_000, tzinfo=UTC)


class Clock:
    """The delivery's clock: it moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class Receiver:
    """The sender port as a receiver sees it: every delivery, and the answer
    scripted for it ("" is a 2xx)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, str], bytes]] = []
        self.answers: list[str] = []

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> str:
        self.sent.append((url, dict(headers), body))
        return self.answers.pop(0) if self.answers else ""


def courier(
    context: AppContext, receiver: Receiver, clock: Clock, holder: str = "a"
) -> Courier:
    assert isinstance(context.storage, ChangeFeed)
    return Courier(
        store=context.webhooks,
        feed=context.storage,
        sender=receiver,
        policy=WebhookPolicy(retry_base=5.0, retry_window=60.0),
        cursor_key=CURSOR_KEY,
        holder=holder,
        clock=clock,
    )


async def endpoint_of(context: AppContext) -> Endpoint:
    [stored] = await context.webhooks.listing(None)
    return stored.endpoint


async def registered(context: AppContext) -> tuple[str, str]:
    created = await add_webhook(
        AddWebhook(scope="user", url=HOOK, description="ci"), context
    )
    return created.id, created.secret


async def test_each_change_is_sent_once_signed_and_shown_as_the_feed_shows_it() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    await create(context, name="before")
    hook_id, secret = await registered(context)
    await create(context, name="tea")
    await create(context, name="coffee")
    assert await deliver_due(courier(context, receiver, clock)) == 2
    feed = await read_changes(ReadChanges(scope="user"), context)
    assert [c.name for c in feed.changes] == ["before", "tea", "coffee"]
    feed.changes = feed.changes[1:]
    last = (await endpoint_of(context)).cursor
    seqs = [last - 1, last]
    for (url, headers, body), change, seq in zip(
        receiver.sent, feed.changes, seqs, strict=True
    ):
        assert url == HOOK
        assert json.loads(body) == {
            "type": "memory.changed",
            "timestamp": format_timestamp(T0),
            "data": change.model_dump(),
        }
        assert body == json.dumps(json.loads(body), separators=(",", ":")).encode()
        message = f"msg_{hook_id}_{seq}"
        assert headers == {
            "content-type": "application/json",
            "webhook-id": message,
            "webhook-timestamp": str(int(T0.timestamp())),
            "webhook-signature": Webhook(secret).sign(
                message, datetime.fromtimestamp(int(T0.timestamp()), UTC), body.decode()
            ),
        }
    done = await endpoint_of(context)
    assert (done.attempts, done.last_error, done.last_delivered_at) == (0, "", T0)
    assert (done.lease_holder, done.lease_until) == ("", None)
    assert await deliver_due(courier(context, receiver, clock)) == 0
    assert len(receiver.sent) == 2
    await create(context, name="milk")
    assert await deliver_due(courier(context, receiver, clock)) == 1
    assert json.loads(receiver.sent[-1][2])["data"]["name"] == "milk"
    assert (await endpoint_of(context)).cursor == done.cursor + 1


async def test_a_failed_attempt_backs_off_doubling_then_resumes_in_order() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    await registered(context)
    await create(context, name="tea")
    await create(context, name="coffee")
    receiver.answers = ["status 503", "x" * 600]
    round_ = courier(context, receiver, clock)
    assert await deliver_due(round_) == 0
    first = await endpoint_of(context)
    assert (first.attempts, first.failing_since, first.last_error) == (
        1,
        T0,
        "status 503",
    )
    assert first.next_attempt_at == T0 + timedelta(seconds=5)
    assert (first.failed_at, first.lease_holder, first.lease_until) == (None, "", None)
    clock.now = T0 + timedelta(seconds=4.9)
    assert await deliver_due(round_) == 0 and len(receiver.sent) == 1
    clock.now = T0 + timedelta(seconds=5)
    assert await deliver_due(round_) == 0
    second = await endpoint_of(context)
    assert (second.attempts, second.failing_since) == (2, T0)
    assert second.next_attempt_at == clock.now + timedelta(seconds=10)
    assert second.last_error == "x" * 500
    [view] = (await list_webhooks(WebhookScope(scope="user"), context)).webhooks
    assert (view.delivery.status, view.delivery.attempts) == ("retrying", 2)
    assert second.next_attempt_at is not None
    assert view.delivery.next_attempt_at == format_timestamp(second.next_attempt_at)
    assert (view.delivery.last_error, view.delivery.failed_at) == ("x" * 500, None)
    assert view.delivery.last_delivered_at is None
    clock.now += timedelta(seconds=10)
    assert await deliver_due(round_) == 2
    ids = [headers["webhook-id"] for _, headers, _ in receiver.sent]
    assert ids[0] == ids[1] == ids[2] != ids[3]
    names = [json.loads(body)["data"]["name"] for _, _, body in receiver.sent]
    assert names == ["tea", "tea", "tea", "coffee"]
    healed = await endpoint_of(context)
    assert (healed.attempts, healed.failing_since, healed.next_attempt_at) == (
        0,
        None,
        None,
    )
    assert (healed.last_error, healed.last_delivered_at) == ("", clock.now)
    [view] = (await list_webhooks(WebhookScope(scope="user"), context)).webhooks
    assert (view.delivery.status, view.delivery.next_attempt_at) == ("active", None)
    assert view.delivery.last_delivered_at == format_timestamp(clock.now)


async def test_failures_for_the_window_fail_it_until_enabled() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    hook_id, _ = await registered(context)
    await create(context, name="tea")
    round_ = courier(context, receiver, clock)
    receiver.answers = ["down"] * 3
    await deliver_due(round_)
    clock.now = T0 + timedelta(seconds=50)
    await deliver_due(round_)
    assert (await endpoint_of(context)).failed_at is None
    assert (await endpoint_of(context)).next_attempt_at == clock.now + timedelta(
        seconds=10
    )
    clock.now = T0 + timedelta(seconds=60)
    await deliver_due(round_)
    failed = await endpoint_of(context)
    assert (failed.failed_at, failed.next_attempt_at, failed.attempts) == (
        clock.now,
        None,
        3,
    )
    clock.now += timedelta(days=1)
    assert await deliver_due(round_) == 0 and len(receiver.sent) == 3
    [view] = (await list_webhooks(WebhookScope(scope="user"), context)).webhooks
    assert failed.failed_at is not None
    assert (view.delivery.status, view.delivery.failed_at) == (
        "failed",
        format_timestamp(failed.failed_at),
    )
    shown = await enable_webhook(WebhookPath(scope="user", id=hook_id), context)
    assert (shown.id, shown.url, shown.delivery.status) == (hook_id, HOOK, "active")
    enabled = await endpoint_of(context)
    assert (enabled.failed_at, enabled.attempts, enabled.failing_since) == (
        None,
        0,
        None,
    )
    assert enabled.next_attempt_at is None
    assert await deliver_due(round_) == 1
    assert json.loads(receiver.sent[-1][2])["data"]["name"] == "tea"


async def test_an_endpoint_leased_by_another_replica_waits_for_its_lease() -> None:
    context, receiver, clock = make_context(), Receiver(), Clock()
    await registered(context)
    await create(context, name="tea")
    [stored] = await context.webhooks.listing(None)
    other = leased(stored.endpoint, "b", T0)
    assert other.lease_until == T0 + timedelta(seconds=30)
    assert await context.webhooks.swap(other, stored.version)
    assert await deliver_due(courier(context, receiver, clock)) == 0
    assert await deliver_due(courier(context, receiver, clock, holder="b")) == 1
    await create(context, name="coffee")
    [stored] = await context.webhooks.listing(None)
    assert await context.webhooks.swap(leased(stored.endpoint, "b", T0), stored.version)
    clock.now = T0 + timedelta(seconds=30)
    assert await deliver_due(courier(context, receiver, clock)) == 1
    assert [json.loads(b)["data"]["name"] for _, _, b in receiver.sent] == [
        "tea",
        "coffee",
    ]


@pytest.mark.parametrize("earlier", [["before"], []])
async def test_changes_pruned_before_delivery_are_skipped_and_the_listing_says_so(
    earlier: list[str],
) -> None:
    """Also for an endpoint registered before its entity's first change."""
    clock, receiver = Clock(), Receiver()
    storage = MemoryStorage(retention=HistoryRetention(changes_seconds=60))
    context = make_context(storage=storage, clock=clock)
    for name in earlier:
        await create(context, name=name)
    await registered(context)
    await create(context, name="tea")
    receiver.answers = ["down"]
    round_ = courier(context, receiver, clock)
    assert await deliver_due(round_) == 0
    [view] = (await list_webhooks(WebhookScope(scope="user"), context)).webhooks
    assert (view.delivery.status, view.delivery.skipped_at) == ("retrying", None)
    clock.now = T0 + timedelta(minutes=2)  # tea is past the retention now
    await create(context, name="coffee")
    assert await deliver_due(round_) == 1
    names = [json.loads(body)["data"]["name"] for _, _, body in receiver.sent]
    assert names == ["tea", "coffee"]
    skipped = format_timestamp(clock.now)
    [view] = (await list_webhooks(WebhookScope(scope="user"), context)).webhooks
    assert (view.delivery.status, view.delivery.skipped_at) == ("active", skipped)
    assert view.delivery.last_error == ""
    clock.now += timedelta(seconds=1)
    await create(context, name="milk")
    assert await deliver_due(round_) == 1
    [view] = (await list_webhooks(WebhookScope(scope="user"), context)).webhooks
    assert view.delivery.skipped_at == skipped
    assert view.delivery.last_delivered_at == format_timestamp(clock.now)
