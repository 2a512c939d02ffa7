from app.server.context import AppContext

from ..domain import Receipt, run_once
from ..policy import expected_from_if_match
from ..schemas import (
    FilePath,
    MatchHeaders,
    MemoryFile,
    ReadFile,
    ReplaceBody,
    ReplaceFact,
)
from .replace_fact import replace_fact
from .replay_file import replay_file


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
        run=lambda: replace_fact(core, context),
        receipt=lambda file: Receipt(version=file.version),
        replay=lambda receipt: replay_file(
            ReadFile(scope=core.scope, area=core.area, name=core.name), receipt, context
        ),
    )
