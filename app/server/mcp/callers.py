"""Who makes an MCP request outside a tool call, and the call context they get."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mcp.server.context import ServerRequestContext
from starlette.requests import Request
from tenchi.mcp import McpRequest

from app.server.context import AppContext
from app.shared.identity import Identity

SURFACE = "mcp"


def request_headers(ctx: ServerRequestContext) -> dict[str, str] | None:
    """The HTTP request's headers (lowercase names); None on stdio."""
    request = ctx.request
    if isinstance(request, Request):
        return dict(request.headers)
    return None


@dataclass(frozen=True)
class Callers:
    """Authenticates a resource or subscription request as a tool call does."""

    authenticate: Callable[[McpRequest], Identity]
    context: Callable[[], AppContext]

    def call_context(
        self, request_id: str | int | None, headers: Mapping[str, str] | None
    ) -> AppContext:
        """The caller's context for one request: its identity, surface and id."""
        identity = self.authenticate(McpRequest(request_id, headers))
        return self.context().for_call(
            identity, surface=SURFACE, request_id=str(request_id)
        )
