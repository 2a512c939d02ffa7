"""The webhook use cases over the in-memory adapters: owners only, safe URLs,
one entity's endpoints, and a purge that removes them."""

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import PurgeMemory
from app.features.memory.tests.conftest import as_identity, create, make_context
from app.features.memory.use_cases.purge_memory import purge_memory
from app.features.webhooks.policy import WebhookPolicy
from app.features.webhooks.schemas import AddWebhook, WebhookPath, WebhookScope
from app.features.webhooks.use_cases.add_webhook import add_webhook
from app.features.webhooks.use_cases.enable_webhook import enable_webhook
from app.features.webhooks.use_cases.list_webhooks import list_webhooks
from app.features.webhooks.use_cases.remove_webhook import remove_webhook
from app.shared.errors import invalid_argument, memory_not_found, restricted_scope
from tests.support.contexts import with_services

HOOK = "https://hooks.example.com/wenchang"


def adding(url: str = HOOK) -> AddWebhook:
    return AddWebhook(scope="user", url=url, description="ci")


async def test_an_owner_adds_lists_and_removes_an_endpoint() -> None:
    context = make_context()
    created = await add_webhook(adding(), context)
    assert created.secret.startswith("whsec_")
    listed = await list_webhooks(WebhookScope(scope="user"), context)
    assert [(h.id, h.url, h.delivery.status) for h in listed.webhooks] == [
        (created.id, HOOK, "active")
    ]
    assert "secret" not in listed.webhooks[0].model_dump()
    await remove_webhook(WebhookPath(scope="user", id=created.id), context)
    assert (await list_webhooks(WebhookScope(scope="user"), context)).webhooks == []
    with pytest.raises(AppError) as refused:
        await remove_webhook(WebhookPath(scope="user", id=created.id), context)
    assert refused.value.definition is memory_not_found


async def test_only_owners_manage_webhooks() -> None:
    context = make_context(grants=["user=alice:writer"])
    with pytest.raises(AppError) as refused:
        await add_webhook(adding(), context)
    assert refused.value.definition is restricted_scope
    assert refused.value.details["reason"] == "role_required"


async def test_another_entity_sees_and_removes_none_of_them() -> None:
    context = make_context()
    created = await add_webhook(adding(), context)
    bob = as_identity(context, "user=bob:owner")
    assert (await list_webhooks(WebhookScope(scope="user"), bob)).webhooks == []
    with pytest.raises(AppError):
        await remove_webhook(WebhookPath(scope="user", id=created.id), bob)
    with pytest.raises(AppError):
        await enable_webhook(WebhookPath(scope="user", id=created.id), bob)


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/plain",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        "https://localhost:8443/hook",
        "ftp://hooks.example.com/",
        "https://user:pw@hooks.example.com/",
        "not a url",
    ],
)
async def test_unsafe_destinations_are_refused(url: str) -> None:
    context = make_context()
    with pytest.raises(AppError) as refused:
        await add_webhook(adding(url), context)
    assert refused.value.definition is invalid_argument
    assert refused.value.details["argument"] == "url"
    assert (await list_webhooks(WebhookScope(scope="user"), context)).webhooks == []


async def test_a_trusted_host_may_be_plain_http_on_loopback() -> None:
    context = make_context()
    trusting = with_services(
        context, webhook_policy=WebhookPolicy(trusted_hosts=frozenset({"127.0.0.1"}))
    )
    created = await add_webhook(adding("http://127.0.0.1:9/hook"), trusting)
    assert created.url == "http://127.0.0.1:9/hook"


async def test_a_purge_removes_the_entity_endpoints() -> None:
    context = make_context()
    await create(context, "- [stated] Tea.\n")
    await add_webhook(adding(), context)
    bob = as_identity(context, "user=bob:owner")
    kept = await add_webhook(adding(), bob)
    await purge_memory(
        PurgeMemory(scope="user", entity_id="alice", dry_run=False), context
    )
    assert (await list_webhooks(WebhookScope(scope="user"), context)).webhooks == []
    remaining = await list_webhooks(WebhookScope(scope="user"), bob)
    assert [h.id for h in remaining.webhooks] == [kept.id]
