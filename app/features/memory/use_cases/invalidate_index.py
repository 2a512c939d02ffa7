from app.server.context import AppContext

from ..policy import locate_entity
from ..schemas import EntityPrefix, IndexInvalidated


async def invalidate_index(
    request: EntityPrefix, context: AppContext
) -> IndexInvalidated:
    await context.index_cache.invalidate(
        locate_entity(request.scope, request.entity_id)
    )
    return IndexInvalidated(scope=request.scope, entity_id=request.entity_id)
