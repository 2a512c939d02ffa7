from app.server.context import AppContext

from ..policy import expected_from_if_match
from ..schemas import DeleteFile, FilePath, MatchHeaders
from .delete_file import delete_file


async def delete_file_at_path(
    params: FilePath, headers: MatchHeaders, context: AppContext
) -> None:
    expected = expected_from_if_match(headers.if_match, headers.if_none_match)
    request = DeleteFile(
        scope=params.scope,
        area=params.area,
        name=params.name,
        expected_version=expected,
    )
    await delete_file(request, context)
