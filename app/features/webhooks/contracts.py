"""The webhook HTTP contracts: add, list, enable and remove an endpoint."""

from tenchi.contracts import contract

from app.shared.errors import (
    invalid_argument,
    memory_not_found,
    restricted_scope,
)

from .schemas import (
    Webhook,
    WebhookBody,
    WebhookCreated,
    WebhookPath,
    Webhooks,
    WebhookScope,
)

TAGS = ("webhooks",)
SCOPE_PATH = "/webhooks/{scope}"
ENDPOINT_PATH = "/webhooks/{scope}/{id}"

add_webhook_contract = contract(
    method="POST",
    path=SCOPE_PATH,
    params=WebhookScope,
    request=WebhookBody,
    response=WebhookCreated,
    status=201,
    errors=(invalid_argument, restricted_scope),
    name="add_webhook",
    summary=(
        "Register a URL to receive the caller's changes in a scope (owners only); "
        "the signing secret is shown once."
    ),
    tags=TAGS,
)

list_webhooks_contract = contract(
    method="GET",
    path=SCOPE_PATH,
    params=WebhookScope,
    response=Webhooks,
    errors=(invalid_argument, restricted_scope),
    name="list_webhooks",
    summary="The caller's webhooks in a scope with their delivery state (owners).",
    tags=TAGS,
)

enable_webhook_contract = contract(
    method="POST",
    path=f"{ENDPOINT_PATH}/enable",
    params=WebhookPath,
    response=Webhook,
    errors=(invalid_argument, restricted_scope, memory_not_found),
    name="enable_webhook",
    summary="Resume a failed webhook's deliveries with the change it failed on.",
    tags=TAGS,
)

remove_webhook_contract = contract(
    method="DELETE",
    path=ENDPOINT_PATH,
    params=WebhookPath,
    status=204,
    errors=(invalid_argument, restricted_scope, memory_not_found),
    name="remove_webhook",
    summary="Remove a webhook: nothing more is delivered to it.",
    tags=TAGS,
)
