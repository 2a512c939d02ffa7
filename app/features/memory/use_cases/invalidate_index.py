from app.server.context import AppContext

from ..domain import entity_prefix
from ..schemas import EntityPrefix, IndexInvalidated


async def invalidate_index(
    request: EntityPrefix, context: AppContext
) -> IndexInvalidated:
    # doctor: public -- operator task; the operator names the entity directly.
    await context.index_cache.invalidate(
        entity_prefix(request.scope, request.entity_id)
    )
    return IndexInvalidated(scope=request.scope, entity_id=request.entity_id)
