from app.server.context import AppContext

from ..schemas import FileListing, ListPrefix, ListQuery, ScopePath
from .list_prefix import list_prefix


async def list_scope(
    params: ScopePath, query: ListQuery, context: AppContext
) -> FileListing:
    # doctor: public -- list_prefix authorizes the caller.
    request = ListPrefix(scope=params.scope, cursor=query.cursor)
    return await list_prefix(request, context)
