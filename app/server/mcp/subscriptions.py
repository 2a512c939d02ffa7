"""Resource subscriptions: `subscriptions/listen` streams of memory-file updates.

Tenchi builds the SDK server with its in-process subscription bus, which only a
tool call of this process could publish to. A write through another process
sharing the storage reaches this one only through the change feed, so this
middleware serves `subscriptions/listen` itself: it authenticates the request
as a tool call, follows the caller's changes (``read_changes``, so only the
caller's own entities in scopes it holds) from the moment the stream opens, and
hands each change of a subscribed file to the SDK's own ``ListenHandler`` over a
bus of this stream alone, which acknowledges, stamps and sends
``notifications/resources/updated``. Every other message passes on unchanged.
"""

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, SubscriptionsListenRequestParams
from pydantic import ValidationError
from tenchi.errors import AppError

from app.features.changes.schemas import ReadChanges
from app.features.changes.use_cases.newest_change import newest_change
from app.features.changes.use_cases.read_changes import read_changes
from app.server.context import AppContext
from app.server.mcp.callers import Callers, request_headers

LISTEN = "subscriptions/listen"
POLL_SECONDS = 0.2
"""How often an open stream reads the change log (other processes' writes)."""
MAX_STREAMS = 1024
"""Open listen streams per process; one more is refused before its ack."""

logger = logging.getLogger(__name__)

Files = dict[tuple[str, str], set[str]]
"""(area, name) → the URIs a client subscribed to for that file of one scope."""


def watched_files(uris: Iterable[str]) -> dict[str, Files]:
    """The subscribed memory files by scope; other URIs are kept by the SDK's
    handler (honoured, as a URI of no file is) and never fire."""
    watched: defaultdict[str, Files] = defaultdict(lambda: defaultdict(set))
    for uri in uris:
        parts = urlsplit(uri)
        segments = parts.path.split("/")
        if parts.scheme != "wenchang" or len(segments) != 3 or segments[0]:
            continue
        scope, area, name = (unquote(part) for part in (parts.netloc, *segments[1:]))
        if scope and area and name:
            watched[scope][area, name].add(uri)
    return watched


@dataclass(eq=False)
class StreamBus:
    """The ``SubscriptionBus`` of one listen stream: the follower publishes only
    once the SDK's handler has subscribed, so no change is lost before it."""

    subscribed: anyio.Event = field(default_factory=anyio.Event)
    listeners: list[Callable[[ServerEvent], None]] = field(default_factory=lambda: [])

    async def publish(self, event: ServerEvent) -> None:
        for listener in list(self.listeners):
            listener(event)
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        self.subscribed.set()

        def unsubscribe() -> None:
            if listener in self.listeners:
                self.listeners.remove(listener)

        return unsubscribe


async def follow(
    scope: str,
    after: str,
    files: Files,
    context: AppContext,
    publish: Callable[[str], Awaitable[None]],
) -> None:
    """Publish the URIs of each change of a watched file of ``scope``, in order;
    ``files`` is read afresh for each change (a session's subscriptions change)."""
    while True:
        page = await read_changes(ReadChanges(scope=scope, after=after), context)
        for change in page.changes:
            for uri in sorted(files.get((change.area, change.name), ())):
                await publish(uri)
        after = page.next_cursor
        if not page.changes:
            await anyio.sleep(POLL_SECONDS)


class FileSubscriptions:
    """Middleware serving ``subscriptions/listen`` from the change feed."""

    def __init__(self, callers: Callers) -> None:
        self._callers = callers
        self._open = 0

    async def __call__(
        self, ctx: ServerRequestContext, call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != LISTEN or ctx.request_id is None:
            return await call_next(ctx)
        try:
            params = SubscriptionsListenRequestParams.model_validate(ctx.params or {})
        except ValidationError:
            # The SDK's own validation answers INVALID_PARAMS for it.
            return await call_next(ctx)
        if self._open >= MAX_STREAMS:
            raise MCPError(INTERNAL_ERROR, "Subscription limit reached")
        context = self._callers.call_context(ctx.request_id, request_headers(ctx))
        uris = params.notifications.resource_subscriptions or ()
        starts = await starting_points(watched_files(uris), context)
        bus = StreamBus()
        handler = ListenHandler(bus)
        self._open += 1
        try:
            async with anyio.create_task_group() as followers:
                for scope, (after, files) in starts.items():
                    followers.start_soon(
                        guarded_follow, scope, after, files, context, bus, handler
                    )
                result = await handler(ctx, params)
                followers.cancel_scope.cancel()
                return result
        finally:
            self._open -= 1


async def starting_points(
    watched: dict[str, Files], context: AppContext
) -> dict[str, tuple[str, Files]]:
    """Each watched scope's cursor of "now" (audited as one ``read_changes``);
    a scope the caller cannot follow is left out: its files never fire."""
    starts: dict[str, tuple[str, Files]] = {}
    for scope, files in watched.items():
        query = ReadChanges(scope=scope)
        try:
            after = await context.audited(
                "read_changes",
                query,
                lambda audited, query=query: newest_change(query, audited),
                mutates=False,
            )
        except AppError as error:
            logger.info("listen: not following scope %r: %s", scope, error.code)
            continue
        starts[scope] = (after, files)
    return starts


async def guarded_follow(
    scope: str,
    after: str,
    files: Files,
    context: AppContext,
    bus: StreamBus,
    handler: ListenHandler,
) -> None:
    async def publish(uri: str) -> None:
        await bus.publish(ResourceUpdated(uri=uri))

    await bus.subscribed.wait()
    try:
        await follow(scope, after, files, context, publish)
    except AppError as error:
        # The feed cannot continue (a cursor expired, storage failed): end the
        # stream gracefully; the client listens again and reads afresh.
        logger.warning("listen: scope %r stream ended: %s", scope, error.code)
        handler.close()
