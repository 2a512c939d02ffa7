"""`/mcp/session`: the same MCP server over streamable HTTP with sessions.

``/mcp`` is stateless (Tenchi serves MCP that way), so a 2025-11-25 client's
``resources/subscribe`` has no session to live in there. This endpoint serves
the very server object ``/mcp`` serves (tools, prompt, resources, middleware)
through the SDK's public ``StreamableHTTPSessionManager`` in stateful mode,
behind the same bearer guard. Every request is still authenticated on its own
(Tenchi reads each POST's headers); the SDK binds a session to the credential
that opened it (``scope["user"]``: another token's request answers 404), and
bounds sessions by count (``WENCHANG_MCP_SESSIONS``, 503 beyond) and idleness
(``WENCHANG_MCP_SESSION_IDLE``). `SessionLife` watches each session's requests
so its subscriptions (`session_subscriptions`) end with it: on a DELETE, on a
404 for it, or once it has been idle as long as the SDK allows.
"""

import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from app.server.http.hooks import caller_id
from app.server.mcp.server import transport_security
from app.server.settings import Settings

SESSION_PATH = "/mcp/session"
HELD = "wenchang.mcp_session"
"""Marks a request of this endpoint's ASGI scope: its transport holds sessions."""


def held_session(ctx: ServerRequestContext) -> str | None:
    """The session of a request to ``/mcp/session`` (``""`` before it has one);
    None for a request of another transport."""
    request = ctx.request
    if not isinstance(request, Request) or not request.scope.get(HELD):
        return None
    return request.headers.get(MCP_SESSION_ID_HEADER, "")


def session_manager(
    server: Server[dict[str, object]], settings: Settings
) -> StreamableHTTPSessionManager:
    """A stateful session manager of ``server``; one per run of the app."""
    return StreamableHTTPSessionManager(
        app=server,
        stateless=False,
        security_settings=transport_security(settings),
        session_idle_timeout=settings.mcp_session_idle,
        max_sessions=settings.mcp_sessions,
        max_request_body_size=settings.max_request_bytes,
    )


@dataclass(slots=True)
class Activity:
    in_flight: int = 0
    since: float = 0.0


class SessionLife:
    """The ASGI app of ``/mcp/session`` (behind the bearer guard): marks the
    request, names its credential for the SDK, and tracks each session's
    requests so `on_end` hears when it ends."""

    def __init__(self, idle_seconds: float, on_end: Callable[[str], None]) -> None:
        self._idle = idle_seconds
        self._on_end = on_end
        self._sessions: dict[str, Activity] = {}
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def serving(
        self, manager: StreamableHTTPSessionManager
    ) -> AsyncGenerator[None]:
        """Serve through ``manager`` while it runs, sweeping idle sessions."""
        async with manager.run(), anyio.create_task_group() as sweeper:
            self._manager = manager
            sweeper.start_soon(self._sweep)
            try:
                yield
            finally:
                self._manager = None
                sweeper.cancel_scope.cancel()
                for key in list(self._sessions):
                    self._ended(key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager
        if manager is None:
            raise RuntimeError("MCP is not running: the app lifespan has not started")
        headers = Headers(scope=scope)
        credential = caller_id(headers.get("authorization", ""))
        # The SDK keeps a session for the credential that opened it.
        user = AuthenticatedUser(AccessToken(token="", client_id=credential, scopes=[]))
        scope = {**scope, HELD: True, "user": user}
        key = headers.get(MCP_SESSION_ID_HEADER)
        activity = self._sessions.get(key) if key is not None else None
        if activity is not None:
            activity.in_flight += 1
        answered: list[int] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered.append(message["status"])
                opened = Headers(raw=message.get("headers", [])).get(
                    MCP_SESSION_ID_HEADER
                )
                if opened is not None and opened not in self._sessions:
                    self._sessions[opened] = Activity(since=time.monotonic())
            await send(message)

        try:
            await manager.handle_request(scope, receive, watched)
        finally:
            if activity is not None:
                activity.in_flight -= 1
                activity.since = time.monotonic()
            status = answered[0] if answered else 500
            if key is not None and (
                status == 404 or (scope["method"] == "DELETE" and status < 400)
            ):
                self._ended(key)

    def _ended(self, key: str) -> None:
        if self._sessions.pop(key, None) is not None:
            self._on_end(key)

    async def _sweep(self) -> None:
        # The SDK closes a session idle this long; its subscriptions follow
        # within a quarter of that (30 s at most).
        while True:
            await anyio.sleep(min(self._idle / 4, 30.0))
            now = time.monotonic()
            for key, activity in list(self._sessions.items()):
                if activity.in_flight == 0 and now - activity.since >= self._idle:
                    self._ended(key)
