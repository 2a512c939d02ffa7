"""The Tenchi floor: Wenchang's contracts and the floors' SQL in a minimal Tenchi app.

The framework's floor. The routes bind Wenchang's HTTP contracts (the same
params, headers, bodies, responses and errors, so Tenchi validates exactly
what it does for Wenchang, and JSON bodies are passed through the way Wenchang
serves them, ``app.server.fast.passthrough``) to use cases that run the bare floor's
statements (``floor_sql``) and nothing else: a bearer hook that is a
dict lookup, no scope policy, no cursors, no audit, history, idempotency, rate
limit, telemetry or middleware of ours. ``Wenchang ÷ this`` is the cost of our
own code; ``this ÷ bare floor`` is the framework's share. Configured like the
bare floor (``BENCH_FLOOR_DB``, ``BENCH_FLOOR_TOKENS``); ``uvicorn
bench.tenchi_floor:app``.
"""

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import aiosqlite
from starlette.responses import Response
from tenchi.contracts import Contract
from tenchi.health import health_route
from tenchi.responses import PresentedResponse, ResponseDef, present
from tenchi.routes import Route, RouteGroup, route, route_group
from tenchi.server import RequestInfo, create_app

from app.features.memory.contracts import (
    append_line_contract,
    get_memory_index_contract,
    read_file_contract,
    replace_fact_contract,
    write_file_contract,
)
from app.features.memory.schemas import (
    CreateOrMatchHeaders,
    FileBody,
    FilePath,
    IndexConditionHeaders,
    LineBody,
    MatchHeaders,
    MemoryFile,
    ReadQuery,
    ReplaceBody,
    VersionHeaders,
)
from app.shared.errors import (
    backend_unavailable,
    invalid_argument,
    invalid_argument_error,
    memory_not_found_error,
    oversize_write_error,
    precondition_required_error,
    replace_fact_match_error,
    resolver_failure_error,
    unauthorized,
    version_conflict_error,
)
from app.shared.locations import Location
from bench import floor_sql as sql

INDEX_TAG = '"tenchi-floor"'
"""The floor's index carries a fixed ETag: it implements no conditional index."""


@dataclass(frozen=True, slots=True)
class FloorContext:
    db: aiosqlite.Connection
    tokens: dict[str, dict[str, str]]
    grants: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Shared:
    db: aiosqlite.Connection
    tokens: dict[str, dict[str, str]]


@asynccontextmanager
async def lifespan() -> AsyncGenerator[Shared]:
    async with sql.connection() as db:
        yield Shared(db, sql.load_tokens())


def context_of(shared: Shared) -> FloorContext:
    return FloorContext(shared.db, shared.tokens)


async def bearer(info: RequestInfo, context: FloorContext) -> FloorContext | None:
    if info.contract.public:
        return None
    grants = sql.bearer(info.headers.get("authorization", ""), context.tokens)
    if grants is None:
        raise resolver_failure_error("Send Authorization: Bearer <token>.")
    return replace(context, grants=grants)


def _key(params: FilePath, context: FloorContext) -> tuple[Location, str]:
    location = Location(params.scope, params.area, params.name)
    entity = (context.grants or {}).get(params.scope)
    if entity is None:
        raise invalid_argument_error("scope", "no grant for this scope")
    return location, f"{params.scope}/{entity}/{params.area}/{params.name}.md"


def _file(written: sql.Written) -> MemoryFile:
    return MemoryFile(**written.as_dict())


async def read_file(
    *, params: FilePath, query: ReadQuery, context: FloorContext
) -> MemoryFile:
    del query  # include_expired: the floor stores no expiry
    location, key = _key(params, context)
    row = await sql.select(context.db, key)
    if row is None:
        raise memory_not_found_error(location)
    return _file(sql.stored(params.scope, params.area, params.name, row))


async def _current(
    params: FilePath, if_match: str | None, context: FloorContext
) -> tuple[Location, str, sql.Row]:
    """The row a guarded mutation starts from, when If-Match names its version."""
    if if_match is None:
        raise precondition_required_error()
    location, key = _key(params, context)
    row = await sql.select(context.db, key)
    if row is None:
        raise memory_not_found_error(location)
    if row[5] != if_match[1:-1]:
        raise version_conflict_error(location, row[0].decode(), row[5])
    return location, key, row


async def _swap(
    params: FilePath,
    current: tuple[Location, str, sql.Row],
    content: str,
    meta: sql.Meta,
    context: FloorContext,
) -> MemoryFile:
    location, key, row = current
    data = content.encode()
    if len(data) > sql.MAX_FILE_BYTES:
        raise oversize_write_error(location, len(data), sql.MAX_FILE_BYTES)
    version = await sql.compare_and_swap(context.db, key, data, meta, row[5])
    if version is None:
        raise version_conflict_error(location, row[0].decode(), row[5])
    return _file(
        sql.Written(params.scope, params.area, params.name, content, meta, version)
    )


async def write_file(
    *,
    params: FilePath,
    headers: CreateOrMatchHeaders,
    request: FileBody,
    context: FloorContext,
) -> MemoryFile:
    current = await _current(params, headers.if_match, context)
    meta = sql.replaced_meta(current[2], request.description, list(request.aliases))
    return await _swap(params, current, request.content, meta, context)


async def append_line(
    *, params: FilePath, headers: MatchHeaders, request: LineBody, context: FloorContext
) -> MemoryFile:
    current = await _current(params, headers.if_match, context)
    content = sql.appended(current[2][0].decode(), request.line)
    return await _swap(params, current, content, sql.kept_meta(current[2]), context)


async def replace_fact(
    *,
    params: FilePath,
    headers: MatchHeaders,
    request: ReplaceBody,
    context: FloorContext,
) -> MemoryFile:
    location, _, row = current = await _current(params, headers.if_match, context)
    content = row[0].decode()
    matches = content.count(request.old_string)
    if matches != 1:
        raise replace_fact_match_error(location, content, row[5], matches)
    edited = content.replace(request.old_string, request.new_string, 1)
    return await _swap(params, current, edited, sql.kept_meta(row), context)


async def get_memory_index(
    *, query: ReadQuery, headers: IndexConditionHeaders, context: FloorContext
) -> str:
    del query  # include_expired: the floor stores no expiry
    return await sql.index_body(context.db, context.grants or {})


def _status_200(contract: Contract[Any, Any]) -> ResponseDef[Any, Any]:
    return next(d for d in contract.responses if d.status == 200)


def present_index(body: str) -> PresentedResponse:
    answer = Response(body, media_type="application/json", headers={"ETag": INDEX_TAG})
    return present(_status_200(get_memory_index_contract), response=answer)


def version_headers(file: MemoryFile) -> VersionHeaders:
    return VersionHeaders.model_validate({"ETag": f'"{file.version}"'})


def present_replaced(file: MemoryFile) -> PresentedResponse:
    replaced = _status_200(write_file_contract)
    return present(replaced, file, headers=version_headers(file))


def _file_route(
    contract: Contract[Any, Any],
    use_case: Callable[..., Any],
    presenter: Callable[[MemoryFile], PresentedResponse] | None = None,
) -> Route:
    if presenter is not None:
        return route(contract, use_case, present=presenter)
    return route(contract, use_case, response_headers=version_headers)


def _served_as_wenchang_serves(routes: RouteGroup) -> RouteGroup:
    """The routes served the way Wenchang serves its own (JSON bodies passed
    through), so the floor pays no framework cost that Wenchang avoids."""
    try:
        from app.server.fast.passthrough import served
    except ImportError:
        return routes
    return served(routes)


api_routes = route_group(
    route(get_memory_index_contract, get_memory_index, present=present_index),
    _file_route(read_file_contract, read_file),
    _file_route(write_file_contract, write_file, present_replaced),
    _file_route(append_line_contract, append_line),
    _file_route(replace_fact_contract, replace_fact),
    prefix="/v1",
    errors=(unauthorized, backend_unavailable, invalid_argument),
)
routes = route_group(_served_as_wenchang_serves(api_routes), health_route())


def __getattr__(name: str) -> Any:
    if name == "app":
        return create_app(
            routes=routes,
            context_factory=context_of,
            lifespan=lifespan,
            hooks=(bearer,),
        )
    raise AttributeError(name)
