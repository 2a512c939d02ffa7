"""The bare floor: Wenchang's ``/v1`` SQL and semantics with no framework layers.

A bare Starlette app over the storage work of ``floor_sql`` (one process-wide
aiosqlite connection configured like Wenchang's adapter). The bearer check is a
dict lookup; request bodies are ``json.loads`` plus type checks; every response
is built with ``json.dumps``. Whatever Wenchang spends beyond this is framework,
validation and our own layers. Configured by ``BENCH_FLOOR_DB`` and
``BENCH_FLOOR_TOKENS`` (JSON: token -> scope -> entity).
"""

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bench import floor_sql as sql

state: dict[str, Any] = {}


def _error(status: int, code: str) -> Response:
    return JSONResponse({"code": code, "message": code, "details": {}}, status)


def _locate(request: Request) -> tuple[str, str, str, str] | Response:
    grants = sql.bearer(request.headers.get("authorization", ""), state["tokens"])
    if grants is None:
        return _error(401, "UNAUTHORIZED")
    params = request.path_params
    scope, area, name = params["scope"], params["area"], params["name"]
    entity = grants.get(scope)
    if entity is None:
        return _error(422, "INVALID_ARGUMENT")
    return scope, area, name, f"{scope}/{entity}/{area}/{name}.md"


def _respond(written: sql.Written) -> Response:
    return JSONResponse(written.as_dict(), headers={"ETag": f'"{written.version}"'})


def _expected(request: Request) -> str | None:
    value = request.headers.get("if-match")
    if value is None or len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return None
    return value[1:-1]


def _conflict(row: sql.Row) -> Response:
    return JSONResponse(
        {"code": "VERSION_CONFLICT", "details": {"content": row[0].decode()}},
        412,
        headers={"ETag": f'"{row[5]}"'},
    )


async def read_file(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    scope, area, name, key = located
    row = await sql.select(state["db"], key)
    if row is None:
        return _error(404, "MEMORY_NOT_FOUND")
    return _respond(sql.stored(scope, area, name, row))


async def _guarded(
    request: Request, located: tuple[str, str, str, str]
) -> sql.Row | Response:
    """The current row when If-Match names its version, else the refusal."""
    if _expected(request) is None or located[1] == "system":
        return _error(428, "PRECONDITION_REQUIRED")
    row = await sql.select(state["db"], located[3])
    if row is None:
        return _error(404, "MEMORY_NOT_FOUND")
    return row if row[5] == _expected(request) else _conflict(row)


async def _swap(
    located: tuple[str, str, str, str], row: sql.Row, content: str, meta: sql.Meta
) -> Response:
    data = content.encode()
    if len(data) > sql.MAX_FILE_BYTES:
        return _error(413, "OVERSIZE_WRITE")
    scope, area, name, key = located
    version = await sql.compare_and_swap(state["db"], key, data, meta, row[5])
    if version is None:
        return _error(412, "VERSION_CONFLICT")
    return _respond(sql.Written(scope, area, name, content, meta, version))


async def write_file(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    body = json.loads(await request.body())
    content, description, aliases = (
        body["content"],
        body["description"],
        body["aliases"],
    )
    if not isinstance(content, str) or not isinstance(description, str):
        return _error(422, "VALIDATION_ERROR")
    row = await _guarded(request, located)
    if isinstance(row, Response):
        return row
    return await _swap(
        located, row, content, sql.replaced_meta(row, description, aliases)
    )


async def append_line(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    line = json.loads(await request.body())["line"]
    if not isinstance(line, str) or not sql.is_fact_line(line):
        return _error(422, "INVALID_ARGUMENT")
    row = await _guarded(request, located)
    if isinstance(row, Response):
        return row
    content = sql.appended(row[0].decode(), line)
    return await _swap(located, row, content, sql.kept_meta(row))


async def replace_fact(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    body = json.loads(await request.body())
    old, new = body["old_string"], body["new_string"]
    if not isinstance(old, str) or not old or not isinstance(new, str):
        return _error(422, "INVALID_ARGUMENT")
    row = await _guarded(request, located)
    if isinstance(row, Response):
        return row
    content = row[0].decode()
    if content.count(old) != 1:
        return _error(409, "REPLACE_FACT_MATCH")
    edited = content.replace(old, new, 1)
    return await _swap(located, row, edited, sql.kept_meta(row))


async def get_memory_index(request: Request) -> Response:
    grants = sql.bearer(request.headers.get("authorization", ""), state["tokens"])
    if grants is None:
        return _error(401, "UNAUTHORIZED")
    body = await sql.index_body(state["db"], grants)
    return Response(body, media_type="application/json")


async def health(request: Request) -> Response:
    await state["db"].execute_fetchall("SELECT 1")
    return JSONResponse({"status": "ok"})


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncGenerator[None]:
    state["tokens"] = sql.load_tokens()
    async with sql.connection() as db:
        state["db"] = db
        yield


FILE = "/v1/files/{scope}/{area}/{name}"
app = Starlette(
    routes=[
        Route("/v1/index", get_memory_index),
        Route(FILE, read_file, methods=["GET"]),
        Route(FILE, write_file, methods=["PUT"]),
        Route(FILE + "/lines", append_line, methods=["POST"]),
        Route(FILE + "/replace", replace_fact, methods=["POST"]),
        Route("/health", health),
    ],
    lifespan=lifespan,
)
