"""Both clients manage webhooks against a real server: the secret once, the
listing with its delivery state, removal, typed refusals."""

import pytest
from wenchang_client import (
    AsyncMemoryClient,
    InvalidArgumentError,
    MemoryClient,
    NotFoundError,
)

from wenchang_client_tests.conftest import LiveServer

HOOK = "https://hooks.example.com/wenchang"


def test_the_synchronous_client_adds_lists_and_removes_a_webhook(
    live_server: LiveServer, token: str
) -> None:
    with MemoryClient(live_server.url, token) as client:
        created = client.add_webhook("user", HOOK, description="ci")
        assert created.secret.startswith("whsec_")
        [listed] = client.list_webhooks("user")
        assert (listed.id, listed.url, listed.description) == (created.id, HOOK, "ci")
        assert listed.delivery.status in ("active", "retrying")
        client.remove_webhook("user", created.id)
        assert client.list_webhooks("user") == []
        with pytest.raises(NotFoundError):
            client.remove_webhook("user", created.id)
        with pytest.raises(InvalidArgumentError):
            client.add_webhook("user", "http://10.0.0.1/hook")


async def test_the_asynchronous_client_adds_lists_enables_and_removes(
    live_server: LiveServer, token: str
) -> None:
    async with AsyncMemoryClient(live_server.url, token) as client:
        created = await client.add_webhook("user", HOOK)
        [listed] = await client.list_webhooks("user")
        assert listed.id == created.id
        enabled = await client.enable_webhook("user", created.id)
        assert enabled.delivery.status == "active"
        await client.remove_webhook("user", created.id)
        assert await client.list_webhooks("user") == []
