from app.server.context import AppContext

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
    written = await write_file(
        WriteFile(
            scope=params.scope,
            area=params.area,
            name=params.name,
            content=request.content,
            description=request.description,
            aliases=request.aliases,
            expected_version=expected,
        ),
        context,
    )
    return PutOutcome(file=written, created=expected is None)
