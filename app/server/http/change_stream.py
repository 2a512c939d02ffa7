"""The change feed as Server-Sent Events: ``GET /v1/changes`` asking for a stream.

Tenchi's contracts answer one body, so the front door hands this answer a
request for ``/v1/changes`` whose ``Accept`` names ``text/event-stream``;
every other request goes on to the declared route. It authenticates as the bearer hook
does (spending one request of the caller's rate limit), checks the scope and
cursor through the ``read_changes`` use case before the 200 (a refusal is the
usual envelope; the opening is audited as one ``read_changes`` call), then
sends each change as one event (``id`` its cursor, ``data`` its JSON) and
polls the storage's change log every ``POLL_SECONDS``: a write through any
process sharing the storage arrives within a second. ``Last-Event-ID`` (else
``after``) resumes after that cursor; without either the stream starts from now.
"""

import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from functools import partial

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send
from tenchi.errors import AppError

from app.features.changes.schemas import ChangesPage, ReadChanges
from app.features.changes.use_cases.newest_change import newest_change
from app.features.changes.use_cases.read_changes import read_changes
from app.server.context import AppContext
from app.server.http.hooks import (
    RateLimit,
    authenticate,
    caller_id,
    refusal,
    require_allowance,
)
from app.server.http.request_log import current_request_id
from app.shared.errors import invalid_argument_error
from app.shared.identity import Resolver

PATH = "/v1/changes"
POLL_SECONDS = 0.2
"""How often an open stream reads the change log (other processes' writes)."""
KEEPALIVE_SECONDS = 15.0
"""A comment line this often keeps proxies from closing a quiet stream."""


def wants_stream(scope: Scope) -> bool:
    if scope["path"] != PATH or scope["method"] != "GET":
        return False
    accept = b",".join(v for k, v in scope["headers"] if k == b"accept")
    return b"text/event-stream" in accept


class ChangeStream:
    """The stream's answer (an ASGI app the front door calls for ``PATH``)."""

    path = PATH

    def __init__(
        self,
        *,
        resolver: Resolver,
        context: Callable[[], AppContext],
        rate_limit: RateLimit | None = None,
    ) -> None:
        self._resolver, self._context = resolver, context
        self._rate_limit = rate_limit or RateLimit()

    def answers(self, scope: Scope) -> bool:
        return wants_stream(scope)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            context, query = self._opened(request)
            await require_allowance(context, context.caller, self._rate_limit)
            first = await context.audited(
                "read_changes", query, partial(_first, query), mutates=False
            )
        except AppError as error:
            await refusal(error)(scope, receive, send)
            return
        response = StreamingResponse(
            _events(first, query.scope, context),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )
        await response(scope, receive, send)

    def _opened(self, request: Request) -> tuple[AppContext, ReadChanges]:
        authorization = request.headers.get("authorization", "")
        identity = authenticate(self._resolver, authorization)
        context = self._context().for_call(
            identity,
            request_id=current_request_id.get() or "",
            caller=caller_id(authorization),
            surface="http",
        )
        resume = request.headers.get("last-event-id")
        fields = {"scope": request.query_params.get("scope")}
        fields["after"] = resume or request.query_params.get("after")
        try:
            return context, ReadChanges.model_validate(fields)
        except ValidationError as exc:
            argument = str(exc.errors()[0]["loc"][0]) if exc.errors() else "scope"
            raise invalid_argument_error(argument, "missing or too long") from None


async def _first(query: ReadChanges, context: AppContext) -> ChangesPage:
    """The stream's first page: after its cursor, or from now without one."""
    if query.after is None:
        query = query.model_copy(update={"after": await newest_change(query, context)})
    return await read_changes(query, context)


async def _events(
    page: ChangesPage, scope: str, context: AppContext
) -> AsyncGenerator[str]:
    loop = asyncio.get_running_loop()
    quiet_since = loop.time()
    while True:
        for change in page.changes:
            yield f"id: {change.cursor}\ndata: {change.model_dump_json()}\n\n"
            quiet_since = loop.time()
        if not page.changes:
            if loop.time() - quiet_since >= KEEPALIVE_SECONDS:
                yield ": keep-alive\n\n"
                quiet_since = loop.time()
            await asyncio.sleep(POLL_SECONDS)
        try:
            after = ReadChanges(scope=scope, after=page.next_cursor)
            page = await read_changes(after, context)
        except AppError as error:
            # The stream already answered 200: its end says why, and the client
            # reconnects with Last-Event-ID (or starts over on CURSOR_EXPIRED).
            body = {"code": error.code, "details": dict(error.details)}
            yield f"event: error\ndata: {json.dumps(body)}\n\n"
            return
