from app.server.context import AppContext

from ..domain import run_once
from ..policy import expected_from_if_match
from ..schemas import FilePath, MatchHeaders, MemoryFile, ReplaceBody, ReplaceFact
from .replace_fact import replace_fact


async def post_replacement(
    params: FilePath, request: ReplaceBody, headers: MatchHeaders, context: AppContext
) -> MemoryFile:
    expected = expected_from_if_match(headers.if_match, headers.if_none_match)
    core = ReplaceFact(
        scope=params.scope,
        area=params.area,
        name=params.name,
        old_string=request.old_string,
        new_string=request.new_string,
        expected_version=expected,
        aliases=request.aliases,
        description=request.description,
    )
    return await run_once(
        context.idempotency,
        operation="replace_fact",
        caller=context.caller,
        key=headers.idempotency_key,
        request=core,
        result_type=MemoryFile,
        run=lambda: replace_fact(core, context),
    )
