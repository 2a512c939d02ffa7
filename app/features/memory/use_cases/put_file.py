from app.server.context import AppContext

from ..domain import run_once
from ..policy import expected_from_put
from ..schemas import CreateOrMatchHeaders, FileBody, FilePath, PutOutcome, WriteFile
from .write_file import write_file


async def put_file(
    params: FilePath,
    request: FileBody,
    headers: CreateOrMatchHeaders,
    context: AppContext,
) -> PutOutcome:
    expected = expected_from_put(headers.if_match, headers.if_none_match)
    core = WriteFile(
        scope=params.scope,
        area=params.area,
        name=params.name,
        content=request.content,
        description=request.description,
        aliases=request.aliases,
        expected_version=expected,
    )

    async def write() -> PutOutcome:
        written = await write_file(core, context)
        return PutOutcome(file=written, created=expected is None)

    return await run_once(
        context.idempotency,
        operation="write_file",
        caller=context.caller,
        key=headers.idempotency_key,
        request=core,
        result_type=PutOutcome,
        run=write,
    )
