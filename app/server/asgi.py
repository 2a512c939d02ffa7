"""The ASGI application: the memory API, tool-MCP at /mcp and the browser at /ui/.

Run it with ``wenchang serve`` (or ``uvicorn app.server.asgi:app``).
"""

import functools
from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from tenchi.routes import RouteGroup, route_group
from tenchi.server import create_app

from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.fast import fast_paths_on
from app.server.fast.passthrough import served
from app.server.heap import frozen_after_start
from app.server.http.change_stream import ChangeStream
from app.server.http.front_door import FrontDoor
from app.server.http.hooks import RateLimit, create_bearer_hook
from app.server.http.markdown_zip import MarkdownZip
from app.server.http.refusal_audit import RefusalAudit
from app.server.http.route_order import hot_first
from app.server.mcp.endpoint import HttpMcp, McpExtension
from app.server.mcp.server import SharedContext
from app.server.mcp.telemetry import ToolCallObserver, log_tool_call
from app.server.oauth.wiring import wire_oauth
from app.server.otel import Telemetry
from app.server.routes import api_routes, routes, service_routes
from app.server.runtime import create_context, create_lifespan
from app.server.settings import Settings, load_settings
from app.server.ui.mount import ui_routes
from app.shared.identity import Resolver


def build_app(
    settings: Settings,
    *,
    resolver: Resolver | None = None,
    on_call: Sequence[ToolCallObserver] = (log_tool_call,),
    telemetry: Telemetry | None = None,
    freeze_heap: bool = False,
    mcp_extensions: Sequence[McpExtension] = (),
) -> Starlette:
    """The app; ``telemetry`` (OpenTelemetry) observes it when given.

    ``freeze_heap``: a serving process's start-up objects leave the garbage
    collector's full passes once it has started (``app.server.heap``).
    ``mcp_extensions`` add to the MCP server through its public API before it
    serves (the conformance suite's fixtures, in its test).
    """
    resolver = resolver or TokenFileResolver(settings.tokens_path)
    rate_limit = rate_limit_from(settings)
    if telemetry is not None:
        on_call = (*on_call, telemetry.observe_tool_call)
    running = SharedContext()
    oauth = wire_oauth(settings, resolver, running)
    mcp = HttpMcp(
        settings,
        resolver=oauth.resolver,
        rate_limit=rate_limit,
        on_call=on_call,
        challenge=oauth.challenge,
        extensions=mcp_extensions,
    )
    refusals = RefusalAudit(api_routes, resolver, running)
    lifespan = mcp.lifespan(functools.partial(running.open, create_lifespan(settings)))
    app = create_app(
        routes=served_routes(settings),
        context_factory=create_context,
        lifespan=frozen_after_start(lifespan) if freeze_heap else lifespan,
        hooks=(create_bearer_hook(resolver, rate_limit=rate_limit),),
        max_request_bytes=settings.max_request_bytes,
        middleware=(
            Middleware(
                FrontDoor,
                resolver=resolver,
                on_refusal=telemetry.observe_refusal if telemetry else None,
                answers=(
                    ChangeStream(
                        resolver=resolver, context=running, rate_limit=rate_limit
                    ),
                    MarkdownZip(resolver=resolver, context=running),
                ),
            ),
        ),
        observers=(refusals, *(telemetry.request_observers if telemetry else ())),
        use_case_observers=telemetry.use_case_observers if telemetry else (),
    )
    app.router.routes.extend(mcp.routes)
    app.router.routes.extend(ui_routes())
    app.router.routes.extend(oauth.routes)
    app.router.routes[:] = hot_first(app.router.routes)
    return app


def served_routes(settings: Settings) -> RouteGroup:
    """The declared routes, or their passthrough twins with the fast paths on."""
    if fast_paths_on(settings):
        return route_group(served(api_routes), service_routes)
    return routes


def rate_limit_from(settings: Settings) -> RateLimit:
    return RateLimit(settings.rate_limit, settings.rate_limit_window)


def __getattr__(name: str) -> Starlette:
    # Built on first access so importing this module (tests, tooling) reads no
    # settings and touches no files.
    if name == "app":
        return build_app(load_settings(), freeze_heap=True)
    raise AttributeError(name)
