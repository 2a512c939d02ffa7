from app.server.context import AppContext

from ..domain import Receipt, run_once
from ..policy import expected_from_if_match
from ..schemas import AppendLine, FilePath, LineBody, MatchHeaders, MemoryFile, ReadFile
from .append_line import append_line
from .replay_file import replay_file


async def post_line(
    params: FilePath, request: LineBody, headers: MatchHeaders, context: AppContext
) -> MemoryFile:
    expected = expected_from_if_match(headers.if_match, headers.if_none_match)
    core = AppendLine(
        scope=params.scope,
        area=params.area,
        name=params.name,
        line=request.line,
        expected_version=expected,
        aliases=request.aliases,
        description=request.description,
    )
    return await run_once(
        context.idempotency,
        operation="append_line",
        caller=context.caller,
        key=headers.idempotency_key,
        request=core,
        run=lambda: append_line(core, context),
        receipt=lambda file: Receipt(version=file.version),
        replay=lambda receipt: replay_file(
            ReadFile(scope=core.scope, area=core.area, name=core.name), receipt, context
        ),
    )
