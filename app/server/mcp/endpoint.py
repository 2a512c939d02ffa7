"""Tool-MCP over streamable HTTP at `/mcp`, in the API's process and behind its tokens.

`BearerGuard` answers 401 with `WWW-Authenticate: Bearer` before the MCP layer
sees a request whose bearer token does not resolve, and spends the token's rate
limit like the HTTP API does (429, an audit event for each tool call the refused
message holds, as on /v1); tenchi then resolves the same header again
for every `tools/list` and `tools/call`, so identity always comes from the
request itself. The app lifespan opens storage once and runs the MCP session
manager beside it.
"""

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from mcp.server.mcpserver import MCPServer
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from tenchi.errors import (
    ERROR_SOURCE_HEADER,
    AppError,
    error_body,
    unsupported_media_type,
)
from tenchi.mcp import McpRequest

from app.server.context import AppContext
from app.server.fast.mcp_exchange import SingleExchange
from app.server.http.body_limit import BodyLimit
from app.server.http.hooks import (
    RateLimit,
    authenticate,
    caller_id,
    refusal,
    require_allowance,
)
from app.server.http.middleware import HttpMiddleware
from app.server.http.request_log import HEADER as ID_HEADER
from app.server.http.request_log import current_request_id
from app.server.mcp.callers import Callers
from app.server.mcp.refusal_audit import McpRefusalAudit, tool_calls
from app.server.mcp.server import (
    SURFACE,
    Authenticate,
    SharedContext,
    build_memory_mcp,
    transport_security,
)
from app.server.mcp.session_endpoint import (
    SESSION_PATH,
    SessionLife,
    held_session,
    session_manager,
)
from app.server.mcp.session_subscriptions import SessionSubscriptions
from app.server.mcp.telemetry import ToolCallObserver, log_tool_call
from app.server.runtime import Runtime
from app.server.settings import Settings
from app.shared.identity import Identity, Resolver

MCP_PATH = "/mcp"
Challenge = Callable[[Scope, bool], str]
"""The 401's ``WWW-Authenticate`` for a request (and whether it sent a token)."""
JSON = "application/json"
McpExtension = Callable[[MCPServer[dict[str, object]]], None]
"""Adds to the served MCP server through its public API (resources, say)."""


def bearer_identity(resolver: Resolver) -> Authenticate:
    def identify(request: McpRequest) -> Identity:
        if request.headers is None:
            raise PermissionError("MCP over HTTP needs Authorization: Bearer <token>")
        try:
            return authenticate(resolver, request.headers.get("authorization", ""))
        except AppError as exc:
            raise PermissionError(exc.message) from exc

    return identify


class BearerGuard(HttpMiddleware):
    """Lets a request through to `app` only with a bearer token that resolves
    and has requests left in its rate-limit window."""

    def __init__(
        self,
        app: ASGIApp,
        resolver: Resolver,
        *,
        context: Callable[[], AppContext],
        rate_limit: RateLimit,
        refusals: McpRefusalAudit,
        challenge: Challenge | None = None,
    ) -> None:
        super().__init__(app)
        self._challenge = challenge
        self._resolver = resolver
        self._context = context
        self._rate_limit = rate_limit
        self._refusals = refusals

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        authorization = Headers(scope=scope).get("authorization", "")
        try:
            identity = authenticate(self._resolver, authorization)
        except AppError as exc:
            answer = refusal(exc)
            if self._challenge is not None and exc.status == 401:
                # Points an OAuth client at the authorization server (RFC 9728).
                value = self._challenge(scope, bool(authorization))
                answer.headers["WWW-Authenticate"] = value
            await answer(scope, receive, send)
            return
        try:
            caller = caller_id(authorization)
            await require_allowance(self._context(), caller, self._rate_limit)
        except AppError as exc:
            body = await Request(scope, receive).body()
            await self._record_refused(identity, body, exc.code)
            await refusal(exc)(scope, receive, send)
            return
        refused = media_refusal(scope)
        await (refused or self._app)(scope, receive, send)

    async def _record_refused(self, identity: Identity, body: bytes, code: str) -> None:
        context = self._context().for_call(
            identity, surface=SURFACE, request_id=current_request_id.get() or ""
        )
        for tool, arguments in tool_calls(body):
            await self._refusals.record(context, tool, arguments, code)


def media_refusal(scope: Scope) -> ASGIApp | None:
    """A POST not sent as JSON: 415 with the media types, as Tenchi refuses it on
    /v1 (the SDK would answer a plain-text 400 no caller can act on)."""
    if scope["method"] != "POST":
        return None
    actual = Headers(scope=scope).get("content-type")
    if actual is not None and actual.lower().startswith(JSON):
        return None
    body = error_body(
        code=unsupported_media_type.code,
        message=unsupported_media_type.message,
        details={"expected": JSON, "actual": actual},
    )
    headers = {ERROR_SOURCE_HEADER: "framework"}
    return JSONResponse(
        body, status_code=unsupported_media_type.status, headers=headers
    )


def named_request(send: Send) -> Send:
    """`send`, with the request's id as `x-request-id` on the response, as on /v1;
    a failed tool call names the same id in its result."""
    request_id = current_request_id.get()
    if not request_id:
        return send

    async def named(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", ()), (ID_HEADER, request_id.encode())]
            message = {**message, "headers": headers}
        await send(message)

    return named


class HttpMcp:
    """The MCP server of one app: its guarded route and its part of the lifespan."""

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: Resolver,
        rate_limit: RateLimit,
        on_call: Sequence[ToolCallObserver] = (log_tool_call,),
        challenge: Challenge | None = None,
        extensions: Sequence[McpExtension] = (),
    ) -> None:
        self._shared = SharedContext()
        self._app: ASGIApp | None = None
        self._security = transport_security(settings)
        built = build_memory_mcp(
            settings,
            authenticate=bearer_identity(resolver),
            context=self._shared,
            on_call=on_call,
        )
        self.server: MCPServer[dict[str, object]] = built.server
        for extend in extensions:
            extend(self.server)
        self._direct = built.direct
        guard = BearerGuard(
            self._serve,
            resolver,
            context=self._shared,
            rate_limit=rate_limit,
            refusals=built.refusals,
            challenge=challenge,
        )
        self.route = Route(MCP_PATH, BodyLimit(guard, limit=settings.max_request_bytes))
        self._settings = settings
        self._subscriptions = SessionSubscriptions(
            Callers(bearer_identity(resolver), self._shared), session_of=held_session
        )
        self.server.middleware.append(self._subscriptions)
        self._life = SessionLife(settings.mcp_session_idle, self._subscriptions.end)
        held = BearerGuard(
            self._serve_session,
            resolver,
            context=self._shared,
            rate_limit=rate_limit,
            refusals=built.refusals,
            challenge=challenge,
        )
        limit = settings.max_request_bytes
        self.routes = [self.route]
        if settings.mcp_sessions > 0:
            self.routes.append(Route(SESSION_PATH, BodyLimit(held, limit=limit)))

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            raise RuntimeError("MCP is not running: the app lifespan has not started")
        await self._app(scope, receive, named_request(send))

    async def _serve_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._life(scope, receive, named_request(send))

    def lifespan(
        self, inner: Callable[[], AbstractAsyncContextManager[Runtime]]
    ) -> Callable[[], AbstractAsyncContextManager[Runtime]]:
        @asynccontextmanager
        async def serve() -> AsyncGenerator[Runtime]:
            # Each run needs a fresh session manager: one can be run only once.
            # One JSON body per call instead of an SSE stream: a stateless
            # request has no back channel, so the stream carries nothing else.
            transport = self.server.streamable_http_app(json_response=True)
            lowlevel = self.server.session_manager.app
            async with (
                self._shared.open(inner) as runtime,
                self.server.session_manager.run(),
                lowlevel.lifespan(lowlevel) as state,
                self._subscriptions.run(),
                self._life.serving(session_manager(lowlevel, self._settings)),
            ):
                # With the fast paths off (no direct path), the SDK's
                # transport answers every request: the declared path.
                self._app = (
                    transport
                    if self._direct is None
                    else SingleExchange(
                        lowlevel,
                        transport,
                        security=self._security,
                        lifespan_state=state,
                        direct=self._direct,
                    )
                )
                try:
                    yield runtime
                finally:
                    self._app = None

        return serve
