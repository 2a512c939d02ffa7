from app.server.context import AppContext

from ..domain import Receipt, run_once
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

    async def delete() -> None:
        await delete_file(request, context)

    await run_once(
        context.idempotency,
        operation="delete_file",
        caller=context.caller,
        key=headers.idempotency_key,
        request=request,
        run=delete,
        receipt=lambda _: Receipt(),
        replay=_nothing,
    )


async def _nothing(_: Receipt) -> None:
    return None
