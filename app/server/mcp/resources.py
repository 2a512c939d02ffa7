"""Memory files as MCP resources: ``wenchang://{scope}/{area}/{name}``.

One resource template; ``resources/read`` authenticates the request as a tool
call does and reads the file through the ``read_file`` use case (its grant,
name and system-area rules, its audit event), answering the content as
markdown, with the file's ``last_updated`` as ``_meta.lastModified`` (ISO 8601;
resource contents carry no annotations). ``resources/list`` adds the files of
the caller's index (``get_memory_index``), each with ``annotations.lastModified``.
Names are percent-encoded in the URI, as in a URL path.
"""

from contextvars import ContextVar
from typing import cast
from urllib.parse import quote, unquote

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer

from app.features.memory.schemas import FileEntry, GetMemoryIndex, ReadFile
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.read_file import read_file
from app.server.mcp.callers import Callers, request_headers

FILE_TEMPLATE = "wenchang://{scope}/{area}/{name}"
READ = "resources/read"
LIST = "resources/list"
MARKDOWN = "text/markdown"

read_modified: ContextVar[list[str] | None] = ContextVar(
    "wenchang_resource_modified", default=None
)
"""Set per ``resources/read`` by `LastModified`: the template function runs
inside that request's middleware chain and records the file's timestamp."""


def file_uri(scope: str, area: str, name: str) -> str:
    """The resource URI of a file (each part percent-encoded)."""
    parts = (quote(part, safe="") for part in (scope, area, name))
    return "wenchang://" + "/".join(parts)


def add_file_resources(
    server: MCPServer[dict[str, object]], *, callers: Callers
) -> None:
    """Register the file template on ``server``."""

    async def memory_file(scope: str, area: str, name: str, ctx: Context) -> str:
        call = callers.call_context(ctx.request_id, ctx.headers)
        request = ReadFile(scope=unquote(scope), area=unquote(area), name=unquote(name))
        found = await call.audited(
            "read_file",
            request,
            lambda audited: read_file(request, audited),
            mutates=False,
        )
        modified = read_modified.get()
        if modified is not None:
            modified.append(found.last_updated)
        return found.content

    server.resource(
        FILE_TEMPLATE,
        name="memory_file",
        title="Memory file",
        description="One memory file's content (markdown); scope, area and name "
        "as in read_file.",
        mime_type=MARKDOWN,
    )(memory_file)


async def last_modified(
    ctx: ServerRequestContext, call_next: CallNext
) -> HandlerResult:
    """Middleware: a file read's contents carry ``_meta.lastModified``."""
    if ctx.method != READ:
        return await call_next(ctx)
    modified: list[str] = []
    token = read_modified.set(modified)
    try:
        result = await call_next(ctx)
    finally:
        read_modified.reset(token)
    if not modified or not isinstance(result, dict):
        return result
    contents = cast(list[dict[str, object]], result.get("contents") or [])
    stamped = [_stamped(item, modified[-1]) for item in contents]
    return {**result, "contents": stamped}


def _stamped(item: dict[str, object], modified: str) -> dict[str, object]:
    meta = cast(dict[str, object], item.get("_meta") or {})
    return {**item, "_meta": {**meta, "lastModified": modified}}


class ListedFiles:
    """Middleware: ``resources/list`` also names the caller's indexed files."""

    def __init__(self, callers: Callers) -> None:
        self._callers = callers

    async def __call__(
        self, ctx: ServerRequestContext, call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != LIST or not isinstance(result, dict):
            return result
        call = self._callers.call_context(ctx.request_id, request_headers(ctx))
        request = GetMemoryIndex()
        index = await call.audited(
            "get_memory_index",
            request,
            lambda audited: get_memory_index(request, audited),
            mutates=False,
        )
        listed = cast(list[dict[str, object]], result.get("resources") or [])
        files = [_listed(entry) for entry in index.entries]
        return {**result, "resources": [*listed, *files]}


def _listed(entry: FileEntry) -> dict[str, object]:
    """A file as ``resources/list`` names it (wire form)."""
    listed: dict[str, object] = {
        "uri": file_uri(entry.scope, entry.area, entry.name),
        "name": f"{entry.scope}/{entry.area}/{entry.name}",
        "mimeType": MARKDOWN,
        "annotations": {"lastModified": entry.last_updated},
    }
    if entry.description:
        listed["description"] = entry.description
    return listed
