"""One request in, one JSON answer out: the tool calls of `/mcp` without a session.

For a handshake-era stateless POST the SDK builds a transport, two memory
streams, a server task and a JSON-RPC dispatcher, and tears them down again:
more work than a small tool call itself. A POST that carries one
`tools/call` or `tools/list` request and accepts JSON is answered here instead,
by the SDK's own single-request kernel (`serve_one`, what it runs for a
2026-07-28 request): the same middleware chain (request state, Tenchi's
authentication, our tool order, approval gate and telemetry), the same handlers,
the same JSON body. A plain `tools/call` skips even that kernel: `mcp_direct`
calls the tool and answers the bytes the kernel would. Like the stateless
transport, it has no back channel to the client. Anything else (initialize,
notifications, GET and DELETE, batches, a session id, a 2026-07-28 request, a
refused Host or Origin) goes to the SDK's transport as before.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.transport_security import (
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp.types import (
    DEFAULT_NEGOTIATED_VERSION,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.server.fast.mcp_direct import DirectCalls

SINGLE_EXCHANGE_METHODS = frozenset({"tools/call", "tools/list"})


@dataclass
class _Exchange:
    """The dispatch context of one request answered in its own HTTP response."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: MessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = field(default=False, init=False)

    async def send_raw_request(
        self,
        method: str,
        params: Mapping[str, object] | None,
        opts: CallOptions | None = None,
    ) -> dict[str, object]:
        raise NoBackChannelError(method)

    async def notify(
        self,
        method: str,
        params: Mapping[str, object] | None,
        opts: CallOptions | None = None,
    ) -> None:
        # The stateless JSON transport drops what a call emits besides its answer.
        del method, params, opts

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        del progress, total, message


class SingleExchange:
    """ASGI: answers eligible tool requests itself, passes the rest to `fallback`."""

    def __init__(
        self,
        server: Server[Any],
        fallback: ASGIApp,
        *,
        security: TransportSecuritySettings | None,
        lifespan_state: Any,
        direct: DirectCalls | None = None,
    ) -> None:
        self._server = server
        self._direct = direct
        self._fallback = fallback
        self._security = TransportSecurityMiddleware(security)
        self._lifespan_state = lifespan_state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        version = await self._handshake_version(request)
        if version is None:
            await self._fallback(scope, receive, send)
            return
        body = await request.body()
        message = _single_request(body)
        if message is None:
            await self._fallback(scope, _replaying(body, receive), send)
            return
        answer = await self._direct_answer(request, message)
        if answer is None:
            full = await self._answer(request, message, version)
            answer = full.model_dump_json(by_alias=True, exclude_unset=True).encode()
        await Response(answer, media_type="application/json")(scope, receive, send)

    async def _direct_answer(
        self, request: Request, message: JSONRPCRequest
    ) -> bytes | None:
        """The JSON body of a plain tool call `mcp_direct` answers, else None."""
        plain = None
        if self._direct is not None and message.method == "tools/call":
            plain = self._direct.plain(message.params)
        if self._direct is None or plain is None:
            return None
        answer: JSONRPCResponse | JSONRPCError
        try:
            result = await self._direct.call(request.headers, *plain)
        except Exception as exc:  # answered as the SDK's transport answers a crash
            error = modern_error_data(exc)
            answer = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
            return answer.model_dump_json(by_alias=True, exclude_unset=True).encode()
        if result is None:
            return None
        return to_json({"jsonrpc": "2.0", "id": message.id, "result": result})

    async def _handshake_version(self, request: Request) -> str | None:
        """The protocol version of a request this path may answer, else None."""
        headers = request.headers
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        if (
            request.method != "POST"
            or MCP_SESSION_ID_HEADER in headers
            or version not in HANDSHAKE_PROTOCOL_VERSIONS
            or not check_accept_headers(request)[0]
            or await self._security.validate_request(request, is_post=True)
        ):
            return None
        return version

    async def _answer(
        self, request: Request, message: JSONRPCRequest, version: str
    ) -> JSONRPCResponse | JSONRPCError:
        exchange = _Exchange(
            transport=TransportContext(
                kind="streamable-http", can_send_request=False, headers=request.headers
            ),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self._server,
                exchange,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=self._lifespan_state,
            )
        except Exception as exc:  # answered as the SDK's transport answers a crash
            error = modern_error_data(exc)
            return JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)


def _single_request(body: bytes) -> JSONRPCRequest | None:
    """The body's one tools request, or None for anything this path leaves alone."""
    try:
        decoded: object = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or "id" not in decoded:
        return None
    if cast(dict[str, object], decoded).get("method") not in SINGLE_EXCHANGE_METHODS:
        return None
    try:
        return JSONRPCRequest.model_validate(decoded)
    except ValidationError:
        return None


def _replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` for a request whose body was already read: the body first."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
