from app.server.context import AppContext

from ..schemas import AreaPath, FileListing, ListPrefix, ListQuery
from .list_prefix import list_prefix


async def list_area(
    params: AreaPath, query: ListQuery, context: AppContext
) -> FileListing:
    # doctor: public -- list_prefix authorizes the caller.
    request = ListPrefix(scope=params.scope, area=params.area, cursor=query.cursor)
    return await list_prefix(request, context)
