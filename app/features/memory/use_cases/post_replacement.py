from app.server.context import AppContext

from ..policy import expected_from_if_match
from ..schemas import FilePath, MatchHeaders, MemoryFile, ReplaceBody, ReplaceFact
from .replace_fact import replace_fact


async def post_replacement(
    params: FilePath, request: ReplaceBody, headers: MatchHeaders, context: AppContext
) -> MemoryFile:
    expected = expected_from_if_match(headers.if_match, headers.if_none_match)
    return await replace_fact(
        ReplaceFact(
            scope=params.scope,
            area=params.area,
            name=params.name,
            old_string=request.old_string,
            new_string=request.new_string,
            expected_version=expected,
            aliases=request.aliases,
            description=request.description,
        ),
        context,
    )
