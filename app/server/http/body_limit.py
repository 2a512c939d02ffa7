"""The request-body ceiling on routes Tenchi does not serve (the MCP endpoint).

Tenchi caps its own routes with ``max_request_bytes``; ``BodyLimit`` gives an
ASGI route the same ceiling: a declared ``Content-Length`` over it is refused
unread, and a streamed body is cut off as soon as it passes the limit (the app
sees the client leave), so a client can never make the server buffer more.
"""

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from tenchi.errors import error_body

from app.server.http.middleware import HttpMiddleware


def too_large(limit: int) -> JSONResponse:
    body = error_body(
        code="REQUEST_TOO_LARGE",
        message=f"The request body is over the {limit}-byte limit.",
        details={"limit": limit},
    )
    return JSONResponse(body, status_code=413)


class _Metered:
    """One request's body count; past the limit the app sees the client leave."""

    def __init__(self, receive: Receive, send: Send, limit: int) -> None:
        self._receive = receive
        self._send = send
        self._limit = limit
        self._received = 0
        self.exceeded = False
        self.started = False

    async def receive(self) -> Message:
        if not self.exceeded:
            message = await self._receive()
            self._received += len(message.get("body", b""))
            self.exceeded = self._received > self._limit
            if not self.exceeded:
                return message
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if not self.exceeded or self.started:
            self.started = self.started or message["type"] == "http.response.start"
            await self._send(message)


class BodyLimit(HttpMiddleware):
    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        super().__init__(app)
        self._limit = limit

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self._limit:
            await too_large(self._limit)(scope, receive, send)
            return
        metered = _Metered(receive, send, self._limit)
        try:
            await self._app(scope, metered.receive, metered.send)
        except ClientDisconnect:
            if not metered.exceeded:
                raise
        if metered.exceeded and not metered.started:
            await too_large(self._limit)(scope, receive, send)
