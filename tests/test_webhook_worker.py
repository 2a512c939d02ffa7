"""What the webhook worker of a server hands each delivery round
(``app/server/webhook_worker.py``): the context's store, change feed, cursor
key and clock, the server's webhook policy, and a lease holder of its own
naming the host and process; ``test_runtime_lifespan.py`` has a served change
delivered end to end."""

import os
import socket
from typing import Any

import pytest

from app.features.webhooks.domain.delivery import Courier
from app.features.webhooks.policy import trusting
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.server import webhook_worker
from app.server.webhook_worker import delivering
from tests.support.contexts import context_over


@pytest.fixture
def couriers(monkeypatch: pytest.MonkeyPatch) -> list[Courier]:
    """Each courier a worker makes, as made."""
    made: list[Courier] = []

    def recorded(**fields: Any) -> Courier:
        made.append(Courier(**fields))
        return made[-1]

    monkeypatch.setattr(webhook_worker, "Courier", recorded)
    return made


async def test_each_worker_delivers_from_the_context_as_a_holder_of_its_own(
    couriers: list[Courier],
) -> None:
    storage = MemoryStorage()
    context = context_over(storage, MemoryIndexCache(ttl=30))
    policy = trusting(["hooks.internal"], retry_base=2.0)
    async with delivering(context, policy), delivering(context, policy):
        pass

    first, second = couriers
    assert (first.store, first.feed, first.policy) == (
        context.webhooks,
        storage,
        policy,
    )
    assert (first.cursor_key, first.clock) == (context.cursor_key, context.clock)
    assert first.holder.startswith(f"{socket.gethostname()}:{os.getpid()}:")
    assert second.holder != first.holder
