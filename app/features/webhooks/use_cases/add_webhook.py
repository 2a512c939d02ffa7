"""add_webhook: register an endpoint for the caller's own entity in a scope."""

from app.features.memory.domain import format_timestamp
from app.features.memory.domain.keys import entity_prefix
from app.features.memory.ports import ChangeFeed
from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import Endpoint
from ..domain.signing import new_endpoint_id, new_secret
from ..policy import require_destination, require_owner
from ..schemas import AddWebhook, WebhookCreated

NEWEST = 1 << 62


async def add_webhook(request: AddWebhook, context: AppContext) -> WebhookCreated:
    """A new endpoint; deliveries start with the next change that lands."""
    identity = require_identity(context.identity)
    grant = require_owner(identity, request.scope)
    url = require_destination(request.url, context.webhook_policy)
    now = context.clock()
    cursor = 0
    if isinstance(context.storage, ChangeFeed):
        prefix = entity_prefix(request.scope, grant.entity_id)
        page = await context.storage.changes_after(prefix, NEWEST, now=now, limit=1)
        cursor = page.last
    endpoint = Endpoint(
        id=new_endpoint_id(),
        scope=request.scope,
        entity_id=grant.entity_id,
        url=url,
        description=request.description,
        secret=new_secret(),
        created_at=now,
        cursor=cursor,
    )
    await context.webhooks.create(endpoint)
    return WebhookCreated(
        id=endpoint.id,
        url=url,
        description=endpoint.description,
        secret=endpoint.secret,
        created_at=format_timestamp(now),
    )
