"""list_webhooks: the caller's endpoints in a scope, each with its delivery state."""

from app.features.memory.domain.keys import entity_prefix
from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.views import webhook_view
from ..policy import require_owner
from ..schemas import Webhooks, WebhookScope


async def list_webhooks(request: WebhookScope, context: AppContext) -> Webhooks:
    identity = require_identity(context.identity)
    grant = require_owner(identity, request.scope)
    stored = await context.webhooks.listing(
        entity_prefix(request.scope, grant.entity_id)
    )
    return Webhooks(webhooks=[webhook_view(item.endpoint) for item in stored])
