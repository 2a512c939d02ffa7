"""enable_webhook: resume a failed endpoint with the change it failed on."""

from app.features.memory.domain.keys import entity_prefix
from app.server.context import AppContext
from app.shared.errors import webhook_not_found_error
from app.shared.identity import require_identity

from ..domain import enabled
from ..domain.views import webhook_view
from ..policy import require_owner
from ..schemas import Webhook, WebhookPath

ATTEMPTS = 5


async def enable_webhook(request: WebhookPath, context: AppContext) -> Webhook:
    """The endpoint, due at once; a race with a delivery is tried again."""
    identity = require_identity(context.identity)
    grant = require_owner(identity, request.scope)
    prefix = entity_prefix(request.scope, grant.entity_id)
    for _ in range(ATTEMPTS):
        found = [
            s
            for s in await context.webhooks.listing(prefix)
            if s.endpoint.id == request.id
        ]
        if not found:
            break
        fresh = enabled(found[0].endpoint)
        if await context.webhooks.swap(fresh, found[0].version) is not None:
            return webhook_view(fresh)
    raise webhook_not_found_error(request.scope, request.id)
