"""The floor: the same ``/v1`` SQL and semantics as Wenchang with no framework layers.

A bare Starlette app over one process-wide aiosqlite connection, configured like the
Wenchang adapter (WAL, ``synchronous`` as ``WENCHANG_SQLITE_SYNCHRONOUS`` says,
``FULL`` by default, so both pay the same fsync per commit). The bearer check is a
dict lookup; request bodies are ``json.loads`` plus type checks; every response is
built with ``json.dumps``. Each request runs the statements Wenchang's use cases run
(read = one SELECT; replace and append = SELECT then compare-and-swap UPDATE; index
= one SELECT per granted scope, then order, budget and render), each statement as a
single thread hop. Whatever Wenchang spends beyond this is framework, validation and
our own layers. Configured by ``BENCH_FLOOR_DB`` and ``BENCH_FLOOR_TOKENS`` (JSON:
token -> scope -> entity).
"""

import json
import os
import secrets
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import aiosqlite
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

COLUMNS = "description, aliases, sources, last_updated, version"
INDEX_MAX_BYTES = int(os.environ.get("BENCH_FLOOR_INDEX_MAX_BYTES", "1048576"))
MAX_FILE_BYTES = 16384
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LABELS = ("- [stated] ", "- [observed] ", "- [inferred] ", "- [system] ")

state: dict[str, Any] = {}


def _error(status: int, code: str) -> Response:
    return JSONResponse({"code": code, "message": code, "details": {}}, status)


def _grants(request: Request) -> dict[str, str] | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return state["tokens"].get(token)


def _now() -> str:
    moment = datetime.now(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _file(
    scope: str, area: str, name: str, content: str, meta: tuple[Any, ...]
) -> dict[str, Any]:
    return {
        "scope": scope,
        "area": area,
        "name": name,
        "content": content,
        "version": meta[4],
        "description": meta[0],
        "aliases": json.loads(meta[1]) if isinstance(meta[1], str) else meta[1],
        "sources": json.loads(meta[2]) if isinstance(meta[2], str) else meta[2],
        "last_updated": meta[3],
    }


def _respond_file(body: dict[str, Any], status: int = 200) -> Response:
    return JSONResponse(body, status, headers={"ETag": f'"{body["version"]}"'})


async def _select(key: str) -> tuple[Any, ...] | None:
    db: aiosqlite.Connection = state["db"]
    rows = await db.execute_fetchall(
        f"SELECT data, {COLUMNS} FROM memory_objects WHERE key = ?", (key,)
    )
    rows = list(rows)
    return tuple(rows[0]) if rows else None


def _locate(request: Request) -> tuple[dict[str, str], str, str, str, str] | Response:
    grants = _grants(request)
    if grants is None:
        return _error(401, "UNAUTHORIZED")
    params = request.path_params
    scope, area, name = params["scope"], params["area"], params["name"]
    entity = grants.get(scope)
    if entity is None:
        return _error(422, "INVALID_ARGUMENT")
    return grants, scope, area, name, f"{scope}/{entity}/{area}/{name}.md"


async def read_file(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    _, scope, area, name, key = located
    row = await _select(key)
    if row is None:
        return _error(404, "MEMORY_NOT_FOUND")
    return _respond_file(_file(scope, area, name, row[0].decode(), row[1:]))


def _expected(request: Request) -> str | None:
    value = request.headers.get("if-match")
    if value is None or len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return None
    return value[1:-1]


async def _compare_and_swap(
    key: str, data: bytes, meta: tuple[str, str, str, str], expected: str
) -> str | None:
    db: aiosqlite.Connection = state["db"]
    version = secrets.token_hex(10)
    cursor = await db.execute(
        "UPDATE memory_objects SET data = ?, description = ?, aliases = ?, "
        "sources = ?, last_updated = ?, version = ? WHERE key = ? AND version = ?",
        (data, *meta, version, key, expected),
    )
    return version if cursor.rowcount == 1 else None


def _conflict(row: tuple[Any, ...]) -> Response:
    return JSONResponse(
        {"code": "VERSION_CONFLICT", "details": {"content": row[0].decode()}},
        412,
        headers={"ETag": f'"{row[5]}"'},
    )


async def write_file(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    _, scope, area, name, key = located
    expected = _expected(request)
    body = json.loads(await request.body())
    content, description, aliases = (
        body["content"],
        body["description"],
        body["aliases"],
    )
    if not isinstance(content, str) or not isinstance(description, str):
        return _error(422, "VALIDATION_ERROR")
    if expected is None or area == "system":
        return _error(428, "PRECONDITION_REQUIRED")
    data = content.encode()
    if len(data) > MAX_FILE_BYTES:
        return _error(413, "OVERSIZE_WRITE")
    row = await _select(key)
    if row is None:
        return _error(404, "MEMORY_NOT_FOUND")
    if row[5] != expected:
        return _conflict(row)
    sources = json.dumps(sorted({*json.loads(row[3]), "http"}))
    meta = (description, json.dumps(aliases), sources, _now())
    version = await _compare_and_swap(key, data, meta, expected)
    if version is None:
        return _error(412, "VERSION_CONFLICT")
    return _respond_file(_file(scope, area, name, content, (*meta, version)))


async def append_line(request: Request) -> Response:
    located = _locate(request)
    if isinstance(located, Response):
        return located
    _, scope, area, name, key = located
    expected = _expected(request)
    line = json.loads(await request.body())["line"]
    if not isinstance(line, str) or not line.startswith(LABELS) or "\n" in line:
        return _error(422, "INVALID_ARGUMENT")
    if expected is None:
        return _error(428, "PRECONDITION_REQUIRED")
    row = await _select(key)
    if row is None:
        return _error(404, "MEMORY_NOT_FOUND")
    if row[5] != expected:
        return _conflict(row)
    content = row[0].decode()
    separator = "\n" if content and not content.endswith("\n") else ""
    content = f"{content}{separator}{line}\n"
    data = content.encode()
    if len(data) > MAX_FILE_BYTES:
        return _error(413, "OVERSIZE_WRITE")
    sources = json.dumps(sorted({*json.loads(row[3]), "http"}))
    meta = (row[1], row[2], sources, _now())
    version = await _compare_and_swap(key, data, meta, expected)
    if version is None:
        return _error(412, "VERSION_CONFLICT")
    return _respond_file(_file(scope, area, name, content, (*meta, version)))


def _micros(text: str) -> int:
    delta = datetime.fromisoformat(text) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


async def get_memory_index(request: Request) -> Response:
    grants = _grants(request)
    if grants is None:
        return _error(401, "UNAUTHORIZED")
    db: aiosqlite.Connection = state["db"]
    ranked: list[tuple[int, int, str, str, str, str]] = []
    for scope, entity in grants.items():
        prefix = f"{scope}/{entity}/"
        rows = await db.execute_fetchall(
            f"SELECT key, {COLUMNS} FROM memory_objects "
            "WHERE key >= ? AND key < ? ORDER BY key LIMIT 1000",
            (prefix, prefix[:-1] + "0"),
        )
        for key, description, aliases, sources, updated, version in rows:
            _, _, area, filename = key.split("/")
            entry = {
                "scope": scope,
                "area": area,
                "name": filename[:-3],
                "version": version,
                "description": description,
                "aliases": json.loads(aliases),
                "sources": json.loads(sources),
                "last_updated": updated,
            }
            tier = 0 if area == "system" else 1
            text = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
            ranked.append((tier, -_micros(updated), key, text, scope, area))
    ranked.sort(key=lambda row: row[:3])
    kept: list[str] = []
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for _, _, _, text, scope, area in ranked:
        cost = len(text.encode())
        if not omitted and total + cost <= INDEX_MAX_BYTES:
            kept.append(text)
            total += cost
        else:
            omitted[(scope, area)] += 1
    capped = [
        {"scope": scope, "area": area, "omitted": count}
        for (scope, area), count in sorted(omitted.items())
    ]
    body = f'{{"entries":[{",".join(kept)}],"capped":{json.dumps(capped)}}}'
    return Response(body, media_type="application/json")


async def health(request: Request) -> Response:
    await state["db"].execute_fetchall("SELECT 1")
    return JSONResponse({"status": "ok"})


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    with open(os.environ["BENCH_FLOOR_TOKENS"]) as stream:
        state["tokens"] = json.load(stream)
    db = await aiosqlite.connect(os.environ["BENCH_FLOOR_DB"], isolation_level=None)
    await db.execute("PRAGMA busy_timeout = 5000")
    await db.execute("PRAGMA journal_mode = WAL")
    synchronous = os.environ.get("WENCHANG_SQLITE_SYNCHRONOUS", "full").upper()
    await db.execute(f"PRAGMA synchronous = {synchronous}")
    await db.execute("PRAGMA secure_delete = ON")
    state["db"] = db
    try:
        yield
    finally:
        await db.close()


FILE = "/v1/files/{scope}/{area}/{name}"
app = Starlette(
    routes=[
        Route("/v1/index", get_memory_index),
        Route(FILE, read_file, methods=["GET"]),
        Route(FILE, write_file, methods=["PUT"]),
        Route(FILE + "/lines", append_line, methods=["POST"]),
        Route("/health", health),
    ],
    lifespan=lifespan,
)
