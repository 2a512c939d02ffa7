"""One delivery round: each due endpoint gets the changes after its cursor.

A replica first takes the endpoint's lease by a guarded swap, so replicas
never deliver to one endpoint at once; each change is sent until the receiver
answers 2xx (its ``webhook-id`` the same on every attempt), and only then does
the cursor move, by a swap that also renews the lease: at least once, in commit
order, with no gap. A failed attempt schedules the next one with exponential
backoff; failures lasting the retry window end in the failed state.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from app.features.changes.domain import follows, render_change
from app.features.changes.policy import change_listing, encode_change_cursor
from app.features.memory.domain import format_timestamp
from app.features.memory.ports import ChangeFeed, LoggedChange

from ..policy import WebhookPolicy
from ..ports import WebhookSender, WebhookStore
from . import (
    Endpoint,
    Stored,
    attempt_failed,
    delivered,
    is_due,
    leased,
    released,
)
from .signing import delivery_body, message_id, signed_headers

PAGE = 50


@dataclass(frozen=True, slots=True)
class Courier:
    """What a round runs on: the server's ports, this replica's name, a clock."""

    store: WebhookStore
    feed: ChangeFeed
    sender: WebhookSender
    policy: WebhookPolicy
    cursor_key: bytes
    holder: str
    clock: Callable[[], datetime]


async def deliver_due(courier: Courier) -> int:
    """Deliver what is due on every endpoint this replica can lease; the
    number of changes delivered."""
    sent = 0
    for stored in await courier.store.listing(None):
        if is_due(stored.endpoint, courier.clock(), courier.holder):
            sent += await _deliver_endpoint(courier, stored)
    return sent


async def _deliver_endpoint(courier: Courier, stored: Stored) -> int:
    endpoint: Endpoint = leased(stored.endpoint, courier.holder, courier.clock())
    version = await courier.store.swap(endpoint, stored.version)
    sent = 0
    while version is not None:
        page = await courier.feed.changes_after(
            endpoint.prefix, endpoint.cursor, now=courier.clock(), limit=PAGE
        )
        if not page.changes:
            await courier.store.swap(released(endpoint), version)
            return sent
        if endpoint.cursor == 0:
            # Registered on an empty log: the first change is the start, so
            # that its loss to the retention is a skip like any other.
            endpoint = replace(endpoint, cursor=page.changes[0].seq - 1)
        elif not follows(page, endpoint.cursor):
            # Retention (or a purge) took changes due here: resume at the oldest
            # kept, and say so in the listing for good (docs/changes.md).
            skipped = courier.clock()
            resumed = page.changes[0].seq - 1
            endpoint = replace(endpoint, cursor=resumed, skipped_at=skipped)
        for change in page.changes:
            error = await _send(courier, endpoint, change)
            now = courier.clock()
            if error:
                failed = attempt_failed(
                    endpoint,
                    error,
                    now,
                    base=courier.policy.retry_base,
                    window=courier.policy.retry_window,
                )
                await courier.store.swap(failed, version)
                return sent
            endpoint = delivered(endpoint, change.seq, now)
            version = await courier.store.swap(endpoint, version)
            sent += 1
            if version is None:
                return sent  # removed, or its lease was taken: stop here
    return sent


async def _send(courier: Courier, endpoint: Endpoint, change: LoggedChange) -> str:
    listing = change_listing(endpoint.scope, endpoint.entity_id)
    cursor = partial(encode_change_cursor, courier.cursor_key, listing)
    now = courier.clock()
    body = delivery_body(render_change(change, cursor), format_timestamp(now))
    message = message_id(endpoint.id, change.seq)
    headers = signed_headers(endpoint.secret, message, int(now.timestamp()), body)
    return await courier.sender.send(endpoint.url, headers, body)
