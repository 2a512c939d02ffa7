"""`resources/subscribe` on a session (protocol versions before 2026-07-28).

A stdio process serves one client for its whole life; ``/mcp/session``
(`session_endpoint`) holds streamable HTTP sessions. This middleware answers
``resources/subscribe`` and ``resources/unsubscribe`` of a handshake-era session
(the SDK's ``MCPServer`` registers no handler for them), advertises
``resources.subscribe`` in its ``initialize`` answer, and follows the change feed
of each subscribed scope as `subscriptions` does for a listen stream, sending
``notifications/resources/updated`` on the session's own channel. Its followers
run in the task group `run` opens; `end` stops a session's followers when the
session ends. Requests of a transport that holds no session (the stateless
``/mcp``) pass through untouched.
"""

import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import cast

import anyio
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.types import SubscribeRequestParams
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from tenchi.errors import AppError
from tenchi.mcp import McpRequest

from app.server.context import AppContext
from app.server.mcp.callers import Callers, request_headers
from app.server.mcp.subscriptions import (
    Files,
    follow,
    starting_points,
    watched_files,
)

SUBSCRIBE = "resources/subscribe"
UNSUBSCRIBE = "resources/unsubscribe"
STDIO = "stdio"

SessionOf = Callable[[ServerRequestContext], str | None]
"""The session a request belongs to; None where the transport holds none."""

logger = logging.getLogger(__name__)


def stdio_session(ctx: ServerRequestContext) -> str | None:
    """stdio: every request belongs to the process's one session."""
    return STDIO


@dataclass(eq=False)
class HeldSession:
    """One session's subscriptions, its channel and who made them."""

    session: ServerSession
    headers: Mapping[str, str] | None
    scopes: dict[str, Files] = field(default_factory=lambda: {})
    followers: list[anyio.CancelScope] = field(default_factory=lambda: [])


class SessionSubscriptions:
    """Middleware holding each session's resource subscriptions."""

    def __init__(self, callers: Callers, *, session_of: SessionOf = stdio_session):
        self._callers = callers
        self._session_of = session_of
        self._sessions: dict[str, HeldSession] = {}
        self._followers: TaskGroup | None = None

    @asynccontextmanager
    async def run(self) -> AsyncGenerator[None]:
        """The followers' task group; they stop when it closes."""
        async with anyio.create_task_group() as followers:
            self._followers = followers
            try:
                yield
            finally:
                self._followers = None
                self._sessions.clear()
                followers.cancel_scope.cancel()

    def end(self, key: str) -> None:
        """The session ``key`` ended: stop following its scopes."""
        held = self._sessions.pop(key, None)
        if held is None:
            return
        for scope in held.followers:
            scope.cancel()
        logger.info(
            "subscribe: session ended, %d scope(s) unfollowed", len(held.scopes)
        )

    async def __call__(
        self, ctx: ServerRequestContext, call_next: CallNext
    ) -> HandlerResult:
        key = self._session_of(ctx)
        if key is None or ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if ctx.method == "initialize":
            return subscribable(await call_next(ctx))
        if ctx.method not in (SUBSCRIBE, UNSUBSCRIBE) or ctx.request_id is None:
            return await call_next(ctx)
        uri = SubscribeRequestParams.model_validate(ctx.params or {}).uri
        headers = request_headers(ctx)
        # Authenticated before anything is kept, as a tool call would be.
        context = self._callers.call_context(ctx.request_id, headers)
        if ctx.method == UNSUBSCRIBE:
            held = self._sessions.get(key)
            for files in held.scopes.values() if held is not None else ():
                for uris in files.values():
                    uris.discard(uri)
            return {}
        held = self._sessions.setdefault(key, HeldSession(ctx.session, headers))
        await self._watch(key, held, uri, context)
        return {}

    async def _watch(
        self, key: str, held: HeldSession, uri: str, context: AppContext
    ) -> None:
        watched = watched_files([uri])
        for scope, files in watched.items():
            for name, uris in files.items():
                held.scopes.get(scope, {}).setdefault(name, set()).update(uris)
        new = {
            scope: files for scope, files in watched.items() if scope not in held.scopes
        }
        for scope, (after, files) in (await starting_points(new, context)).items():
            held.scopes[scope] = files
            if self._followers is not None:
                cancel = anyio.CancelScope()
                held.followers.append(cancel)
                self._followers.start_soon(
                    self._follow, key, held, scope, after, context, cancel
                )

    async def _follow(
        self,
        key: str,
        held: HeldSession,
        scope: str,
        after: str,
        context: AppContext,
        cancel: anyio.CancelScope,
    ) -> None:
        async def send(uri: str) -> None:
            if not self._still_entitled(held, context):
                # The token was revoked or its grants changed: nothing more
                # reaches this session until it subscribes again.
                self.end(key)
                return
            await held.session.send_resource_updated(uri)

        with cancel:
            try:
                await follow(scope, after, held.scopes[scope], context, send)
            except AppError as error:
                # The feed cannot continue (a cursor expired, storage failed):
                # the scope's subscriptions lapse; subscribing again starts afresh.
                logger.warning(
                    "subscribe: scope %r no longer followed: %s", scope, error.code
                )
                held.scopes.pop(scope, None)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                # The session's channel closed under us: the session is gone.
                self.end(key)

    def _still_entitled(self, held: HeldSession, context: AppContext) -> bool:
        """Whether the credential that subscribed still resolves to its identity."""
        if held.headers is None:
            return True
        try:
            identity = self._callers.authenticate(McpRequest(None, held.headers))
        except PermissionError:
            return False
        return identity == context.identity


def subscribable(result: HandlerResult) -> HandlerResult:
    """An ``initialize`` answer advertising ``resources.subscribe``."""
    if not isinstance(result, dict):
        return result
    capabilities = cast(dict[str, object], result.get("capabilities") or {})
    resources = cast(dict[str, object] | None, capabilities.get("resources"))
    if resources is None:
        return result
    advertised = {**capabilities, "resources": {**resources, "subscribe": True}}
    return {**result, "capabilities": advertised}
