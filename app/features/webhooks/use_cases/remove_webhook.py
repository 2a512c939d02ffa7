"""remove_webhook: stop and forget one of the caller's endpoints."""

from app.features.memory.domain.keys import entity_prefix
from app.server.context import AppContext
from app.shared.errors import webhook_not_found_error
from app.shared.identity import require_identity

from ..policy import require_owner
from ..schemas import WebhookPath


async def remove_webhook(request: WebhookPath, context: AppContext) -> None:
    identity = require_identity(context.identity)
    grant = require_owner(identity, request.scope)
    prefix = entity_prefix(request.scope, grant.entity_id)
    if not await context.webhooks.remove(prefix, request.id):
        raise webhook_not_found_error(request.scope, request.id)
