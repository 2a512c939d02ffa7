"""`resources/subscribe` on a stdio session (protocol versions before 2026-07-28).

A stdio process serves one client for its whole life: the session that holds
its subscriptions. This middleware answers ``resources/subscribe`` and
``resources/unsubscribe`` of a handshake-era session (the SDK's ``MCPServer``
registers no handler for them), advertises ``resources.subscribe`` in its
``initialize`` answer, and follows the change feed of each subscribed scope as
`subscriptions` does for a listen stream, sending
``notifications/resources/updated`` on the session's own channel. Its followers
run in the task group `run` opens beside the stdio server.
"""

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.types import SubscribeRequestParams
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from tenchi.errors import AppError

from app.server.context import AppContext
from app.server.mcp.callers import Callers
from app.server.mcp.subscriptions import (
    Files,
    follow,
    starting_points,
    watched_files,
)

SUBSCRIBE = "resources/subscribe"
UNSUBSCRIBE = "resources/unsubscribe"

logger = logging.getLogger(__name__)


class SessionSubscriptions:
    """Middleware holding one session's resource subscriptions."""

    def __init__(self, callers: Callers) -> None:
        self._callers = callers
        self._scopes: dict[str, Files] = {}
        self._session: ServerSession | None = None
        self._followers: TaskGroup | None = None

    @asynccontextmanager
    async def run(self) -> AsyncGenerator[None]:
        """The followers' task group; they stop when the session does."""
        async with anyio.create_task_group() as followers:
            self._followers = followers
            try:
                yield
            finally:
                self._followers = None
                followers.cancel_scope.cancel()

    async def __call__(
        self, ctx: ServerRequestContext, call_next: CallNext
    ) -> HandlerResult:
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if ctx.method == "initialize":
            return subscribable(await call_next(ctx))
        if ctx.method not in (SUBSCRIBE, UNSUBSCRIBE) or ctx.request_id is None:
            return await call_next(ctx)
        uri = SubscribeRequestParams.model_validate(ctx.params or {}).uri
        if ctx.method == UNSUBSCRIBE:
            for files in self._scopes.values():
                for uris in files.values():
                    uris.discard(uri)
            return {}
        self._session = ctx.session
        await self._watch(uri, str(ctx.request_id))
        return {}

    async def _watch(self, uri: str, request_id: str) -> None:
        context = self._callers.call_context(request_id, None)
        watched = watched_files([uri])
        for scope, files in watched.items():
            for key, uris in files.items():
                self._scopes.get(scope, {}).setdefault(key, set()).update(uris)
        new = {
            scope: files
            for scope, files in watched.items()
            if scope not in self._scopes
        }
        for scope, (after, files) in (await starting_points(new, context)).items():
            self._scopes[scope] = files
            if self._followers is not None:
                self._followers.start_soon(self._follow, scope, after, context)

    async def _follow(self, scope: str, after: str, context: AppContext) -> None:
        try:
            await follow(scope, after, self._scopes[scope], context, self._send)
        except AppError as error:
            # The feed cannot continue (a cursor expired, storage failed): the
            # scope's subscriptions lapse; subscribing again starts afresh.
            logger.warning(
                "subscribe: scope %r no longer followed: %s", scope, error.code
            )
            self._scopes.pop(scope, None)

    async def _send(self, uri: str) -> None:
        if self._session is not None:
            await self._session.send_resource_updated(uri)


def subscribable(result: HandlerResult) -> HandlerResult:
    """An ``initialize`` answer advertising ``resources.subscribe``."""
    if not isinstance(result, dict):
        return result
    capabilities = cast(dict[str, Any], result.get("capabilities") or {})
    resources = cast(dict[str, Any] | None, capabilities.get("resources"))
    if resources is None:
        return result
    advertised = {**capabilities, "resources": {**resources, "subscribe": True}}
    return {**result, "capabilities": advertised}
