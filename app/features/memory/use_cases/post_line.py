from app.server.context import AppContext

from ..policy import expected_from_if_match
from ..schemas import AppendLine, FilePath, LineBody, MatchHeaders, MemoryFile
from .append_line import append_line


async def post_line(
    params: FilePath, request: LineBody, headers: MatchHeaders, context: AppContext
) -> MemoryFile:
    expected = expected_from_if_match(headers.if_match, headers.if_none_match)
    return await append_line(
        AppendLine(
            scope=params.scope,
            area=params.area,
            name=params.name,
            line=request.line,
            expected_version=expected,
            aliases=request.aliases,
            description=request.description,
        ),
        context,
    )
