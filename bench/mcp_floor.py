"""The MCP SDK floor: the SDK's own server answering four tools with the floors' SQL.

The MCP SDK's ``MCPServer`` over stateless streamable HTTP with JSON responses
(the cheapest transport the SDK offers), tools registered with its decorator and
nothing else: no Tenchi, no identity, policy, audit, telemetry or middleware of
ours; the bearer check is a dict lookup. ``MCP SDK floor ÷ bare HTTP floor`` is
the SDK's own per-call share of the MCP ÷ HTTP ratio. Configured like the other
floors (``BENCH_FLOOR_DB``, ``BENCH_FLOOR_TOKENS``); ``uvicorn bench.mcp_floor:app``.
"""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bench import floor_sql as sql

state: dict[str, Any] = {}
server: MCPServer[Any] = MCPServer("mcp-floor", log_level="WARNING")


def _key(ctx: Context[Any, Any], scope: str, area: str, name: str) -> str:
    headers = ctx.headers or {}
    grants = sql.bearer(headers.get("authorization", ""), state["tokens"])
    if grants is None or scope not in grants:
        raise PermissionError("Send Authorization: Bearer <token> with a grant.")
    return f"{scope}/{grants[scope]}/{area}/{name}.md"


async def _current(key: str, expected_version: str) -> sql.Row:
    row = await sql.select(state["db"], key)
    if row is None:
        raise LookupError("no such file")
    if row[5] != expected_version:
        raise ValueError("version conflict")
    return row


async def _swap(
    where: tuple[str, str, str, str], row: sql.Row, content: str, meta: sql.Meta
) -> dict[str, Any]:
    scope, area, name, key = where
    data = content.encode()
    if len(data) > sql.MAX_FILE_BYTES:
        raise ValueError("oversize write")
    version = await sql.compare_and_swap(state["db"], key, data, meta, row[5])
    if version is None:
        raise ValueError("version conflict")
    return sql.Written(scope, area, name, content, meta, version).as_dict()


@server.tool()
async def read_file(
    scope: str, area: str, name: str, ctx: Context[Any, Any]
) -> dict[str, Any]:
    row = await sql.select(state["db"], _key(ctx, scope, area, name))
    if row is None:
        raise LookupError("no such file")
    return sql.stored(scope, area, name, row).as_dict()


@server.tool()
async def write_file(
    scope: str,
    area: str,
    name: str,
    content: str,
    description: str,
    aliases: list[str],
    expected_version: str,
    ctx: Context[Any, Any],
) -> dict[str, Any]:
    key = _key(ctx, scope, area, name)
    row = await _current(key, expected_version)
    meta = sql.replaced_meta(row, description, aliases)
    return await _swap((scope, area, name, key), row, content, meta)


@server.tool()
async def append_line(
    scope: str,
    area: str,
    name: str,
    line: str,
    expected_version: str,
    ctx: Context[Any, Any],
) -> dict[str, Any]:
    if not sql.is_fact_line(line):
        raise ValueError("not a fact line")
    key = _key(ctx, scope, area, name)
    row = await _current(key, expected_version)
    content = sql.appended(row[0].decode(), line)
    return await _swap((scope, area, name, key), row, content, sql.kept_meta(row))


@server.tool()
async def get_memory_index(ctx: Context[Any, Any]) -> str:
    headers = ctx.headers or {}
    grants = sql.bearer(headers.get("authorization", ""), state["tokens"])
    if grants is None:
        raise PermissionError("Send Authorization: Bearer <token>.")
    return await sql.index_body(state["db"], grants)


async def health(request: Request) -> Response:
    await state["db"].execute_fetchall("SELECT 1")
    return JSONResponse({"status": "ok"})


def _build() -> Starlette:
    inner = server.streamable_http_app(json_response=True, stateless_http=True)
    serve_mcp = inner.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        state["tokens"] = sql.load_tokens()
        async with sql.connection() as db, serve_mcp(app):
            state["db"] = db
            yield

    inner.router.lifespan_context = lifespan
    inner.add_route("/health", health)
    return inner


def __getattr__(name: str) -> Any:
    if name == "app":
        return _build()
    raise AttributeError(name)
