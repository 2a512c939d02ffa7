from app.server.context import AppContext

from ..domain import Receipt, run_once
from ..policy import expected_from_put
from ..schemas import (
    CreateOrMatchHeaders,
    FileBody,
    FilePath,
    PutOutcome,
    ReadFile,
    WriteFile,
)
from .replay_file import replay_file
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

    async def replay(receipt: Receipt) -> PutOutcome:
        where = ReadFile(scope=core.scope, area=core.area, name=core.name)
        file = await replay_file(where, receipt, context)
        return PutOutcome(file=file, created=bool(receipt.created))

    return await run_once(
        context.idempotency,
        operation="write_file",
        caller=context.caller,
        key=headers.idempotency_key,
        request=core,
        run=write,
        receipt=lambda put: Receipt(version=put.file.version, created=put.created),
        replay=replay,
    )
