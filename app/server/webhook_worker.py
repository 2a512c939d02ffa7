"""The delivery worker: a task of each serving process that sends due webhooks.

Every ``POLL_SECONDS`` it runs one delivery round (``features/webhooks/
delivery.py``) over the endpoints every process on the storage shares; leases
in the store keep replicas from delivering to one endpoint at once, and
cursors in it let a restarted process resume where any left off.
"""

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from app.features.memory.ports import ChangeFeed
from app.features.webhooks.domain.delivery import Courier, deliver_due
from app.features.webhooks.policy import WebhookPolicy
from app.infra.webhook_sender import HttpWebhookSender
from app.server.context import AppContext

POLL_SECONDS = 0.25
logger = logging.getLogger(__name__)


async def _rounds(courier: Courier) -> None:
    while True:
        try:
            await deliver_due(courier)
        except Exception:
            # An outage of the store or the feed: logged, and the next round
            # tries again; state only moves by guarded swaps, so nothing is lost.
            logger.exception("webhook delivery round failed")
        await asyncio.sleep(POLL_SECONDS)


@asynccontextmanager
async def delivering(
    context: AppContext, policy: WebhookPolicy
) -> AsyncGenerator[None]:
    """Deliver webhooks while the block runs (storage with a change feed only)."""
    storage = context.storage
    if not isinstance(storage, ChangeFeed):
        yield
        return
    sender = HttpWebhookSender(policy.trusted_hosts)
    courier = Courier(
        store=context.webhooks,
        feed=storage,
        sender=sender,
        policy=policy,
        cursor_key=context.cursor_key,
        holder=f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}",
        clock=context.clock,
    )
    task = asyncio.create_task(_rounds(courier))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await sender.close()
