"""MCP middleware naming the server as Wenchang, at Wenchang's version, to clients.

Tenchi builds the SDK server with Tenchi's own version, and the SDK offers no
public way to set it afterwards, so the answers that carry ``serverInfo``
(``initialize``, and ``server/discover`` of newer protocol versions) are
rewritten on their way out.
"""

from dataclasses import dataclass
from importlib.metadata import version
from typing import cast

from mcp.server.context import CallNext, HandlerResult

from app.server.declarations import McpRequestContext

SERVER_NAME = "wenchang"
IDENTIFYING_METHODS = frozenset({"initialize", "server/discover"})


def wenchang_version() -> str:
    """The installed distribution's version (``pyproject.toml``'s)."""
    return version("wenchang")


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Sets ``serverInfo`` to ``{"name": "wenchang", "version": <ours>}``."""

    name: str = SERVER_NAME
    version: str = ""

    async def __call__(
        self, ctx: McpRequestContext, call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method not in IDENTIFYING_METHODS or not isinstance(result, dict):
            return result
        info = result.get("serverInfo")
        if not isinstance(info, dict):
            return result
        named = {**cast(dict[str, object], info), "name": self.name}
        return {**result, "serverInfo": named | {"version": self.version}}
