"""Memory files as MCP resources: ``wenchang://{scope}/{area}/{name}``.

One resource template; ``resources/read`` authenticates the request as a tool
call does and reads the file through the ``read_file`` use case (its grant,
name and system-area rules, its audit event), answering the content as
markdown. Names are percent-encoded in the URI, as in a URL path.
"""

from collections.abc import Callable
from urllib.parse import quote, unquote

from mcp.server.mcpserver import Context, MCPServer
from tenchi.mcp import McpRequest

from app.features.memory.schemas import ReadFile
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext
from app.shared.identity import Identity

FILE_TEMPLATE = "wenchang://{scope}/{area}/{name}"
SURFACE = "mcp"


def file_uri(scope: str, area: str, name: str) -> str:
    """The resource URI of a file (each part percent-encoded)."""
    parts = (quote(part, safe="") for part in (scope, area, name))
    return "wenchang://" + "/".join(parts)


def add_file_resources(
    server: MCPServer[dict[str, object]],
    *,
    authenticate: Callable[[McpRequest], Identity],
    context: Callable[[], AppContext],
) -> None:
    """Register the file template on ``server``."""

    async def memory_file(scope: str, area: str, name: str, ctx: Context) -> str:
        identity = authenticate(McpRequest(ctx.request_id, ctx.headers))
        call = context().for_call(
            identity, surface=SURFACE, request_id=str(ctx.request_id)
        )
        request = ReadFile(scope=unquote(scope), area=unquote(area), name=unquote(name))
        found = await call.audited(
            "read_file",
            request,
            lambda audited: read_file(request, audited),
            mutates=False,
        )
        return found.content

    server.resource(
        FILE_TEMPLATE,
        name="memory_file",
        title="Memory file",
        description="One memory file's content (markdown); scope, area and name "
        "as in read_file.",
        mime_type="text/markdown",
    )(memory_file)
