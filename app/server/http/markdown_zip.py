"""``GET /v1/export/markdown``: the caller's own files as a zip of the markdown
tree ``memory.export_markdown`` writes (the browser's download).

Tenchi's contracts answer one body, so the front door hands that path to this
answer, as it does the event stream to ``change_stream``: it authenticates as the
bearer hook does and checks the grants through the ``read_markdown_archive`` use
case before the 200 (a refusal is the usual envelope), then streams the archive,
each file deflated and sent as it is read: memory stays bounded however many files
there are.
"""

import zipfile
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from datetime import datetime

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send
from tenchi.errors import AppError

from app.features.memory.ports.markdown_transfers import ArchivedFile
from app.features.memory.schemas import ReadMarkdownArchive
from app.features.memory.use_cases.read_markdown_archive import (
    read_markdown_archive,
)
from app.server.context import AppContext
from app.server.http.hooks import authenticate, caller_id, refusal
from app.server.http.request_log import current_request_id
from app.shared.errors import invalid_argument_error
from app.shared.identity import Resolver

PATH = "/v1/export/markdown"
ARCHIVE_NAME = "wenchang-memory.zip"
EARLIEST = (1980, 1, 1, 0, 0, 0)
"""The first moment a zip entry can carry."""


class _Chunks:
    """A write-only stream the zip writes into; ``take`` empties it."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        taken, self._parts = b"".join(self._parts), []
        return taken


def _entry(file: ArchivedFile) -> zipfile.ZipInfo:
    moment: datetime = file.last_updated
    stamp = max(EARLIEST, moment.timetuple()[:6])
    entry = zipfile.ZipInfo(file.path, date_time=stamp)
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


async def zipped(files: AsyncIterator[ArchivedFile]) -> AsyncGenerator[bytes]:
    """The zip of ``files``, one chunk per file, then its central directory."""
    sink = _Chunks()
    # A stream without seek: zipfile writes each entry's sizes after its data.
    with zipfile.ZipFile(sink, mode="w") as archive:
        async for file in files:
            archive.writestr(_entry(file), file.data)
            yield sink.take()
    yield sink.take()


class MarkdownZip:
    """The archive's answer (an ASGI app the front door calls for ``PATH``)."""

    path = PATH

    def __init__(
        self,
        *,
        resolver: Resolver,
        context: Callable[[], AppContext],
    ) -> None:
        self._resolver, self._context = resolver, context

    def answers(self, scope: Scope) -> bool:
        return scope["method"] == "GET"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            context, query = self._opened(request)
            files = await read_markdown_archive(query, context)
        except AppError as error:
            await refusal(error)(scope, receive, send)
            return
        response = StreamingResponse(
            zipped(files),
            media_type="application/zip",
            headers={
                "cache-control": "no-store",
                "content-disposition": f'attachment; filename="{ARCHIVE_NAME}"',
            },
        )
        await response(scope, receive, send)

    def _opened(self, request: Request) -> tuple[AppContext, ReadMarkdownArchive]:
        authorization = request.headers.get("authorization", "")
        identity = authenticate(self._resolver, authorization)
        context = self._context().for_call(
            identity,
            request_id=current_request_id.get() or "",
            caller=caller_id(authorization),
            surface="http",
        )
        try:
            return context, ReadMarkdownArchive.model_validate(
                {"scope": request.query_params.get("scope")}
            )
        except ValidationError:
            raise invalid_argument_error("scope", "too long") from None
