"""Costs measured in isolation (in-process, CPU): outside our code, and our own.

- Tenchi 0.17+ re-checks every JSON response body: after pydantic's
  ``validate_python`` and ``dump_json`` it parses the bytes, validates them
  against the published JSON Schema with the pure-Python ``jsonschema`` package
  and re-reads them with ``validate_json``. Shown per response type, beside the
  serialisation alone.
- One trivial GET through a bare Starlette route against Tenchi's request
  pipeline (contract, route, hook), with the body re-checked or passed through,
  and with Wenchang's ASGI middlewares: the framework's per-request floor.
- Wenchang's own per-request work that can be timed alone (rate limiter, token
  resolution).
"""

import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from app.features.memory.schemas import FileEntry, MemoryFile, MemoryIndex


def _micros(action: Callable[[], object], budget: float = 0.2) -> float:
    """Best-of-5 mean CPU time of ``action`` in microseconds.

    CPU time of this process, not wall time, so other load on the machine
    does not inflate it.
    """
    once = timeit.timeit(action, number=1, timer=time.process_time)
    number = max(1, int(budget / max(once, 1e-6) / 5))
    runs = timeit.repeat(action, number=number, repeat=5, timer=time.process_time)
    return min(runs) / number * 1e6


def _file() -> MemoryFile:
    return MemoryFile(
        scope="user",
        area="preferences",
        name="note-0001",
        content="# Tea\n\n- [stated] Prefers green tea.\n- [observed] Oolong later.\n",
        version="0123456789abcdef0123",
        description="Notes about tea",
        aliases=["drinks", "tea"],
        sources=["http"],
        last_updated="2026-01-01T00:00:00Z",
    )


def _index(size: int) -> MemoryIndex:
    entries = [
        FileEntry(
            scope="user",
            area="preferences",
            name=f"note-{i:04d}",
            version="0123456789abcdef0123",
            description="Notes about a topic: preferences, habits and decisions",
            aliases=[f"note-{i:04d}-alias", "bench"],
            sources=["http"],
            last_updated="2026-01-01T00:00:00.000007Z",
        )
        for i in range(size)
    ]
    return MemoryIndex(entries=entries, capped=[])


def response_checks(*, quick: bool = False) -> list[tuple[str, int, float, float]]:
    """(response, bytes, serialise µs, Tenchi's full response check µs)."""
    from tenchi._response_validation import response_schema_validator
    from tenchi.server import _validated_payload  # pyright: ignore[reportPrivateUsage]

    rows: list[tuple[str, int, float, float]] = []
    cases: list[tuple[str, type[Any], Any]] = [
        ("read_file (MemoryFile)", MemoryFile, _file()),
        ("get_memory_index, 50 entries", MemoryIndex, _index(50)),
        ("get_memory_index, 500 entries", MemoryIndex, _index(500)),
    ][: 2 if quick else 3]
    for label, model, value in cases:
        adapter = TypeAdapter(model)
        checker = response_schema_validator(adapter, label=label)
        payload = adapter.dump_json(value, by_alias=True)
        serialise = _micros(lambda a=adapter, v=value: a.dump_json(v, by_alias=True))
        checked = _micros(
            lambda a=adapter, v=value, c=checker: _validated_payload(
                a, v, media_type="application/json", schema_validator=c
            )
        )
        rows.append((label, len(payload), serialise, checked))
    return rows


def render(*, quick: bool = False) -> list[str]:
    lines = [
        "| JSON response | bytes | pydantic dump_json us | Tenchi response check us "
        "| check ÷ dump |",
        "|---|--:|--:|--:|--:|",
    ]
    for label, size, serialise, checked in response_checks(quick=quick):
        lines.append(
            f"| {label} | {size:,} | {serialise:,.0f} | {checked:,.0f} "
            f"| {checked / serialise:,.0f}x |"
        )
    lines += ["", "| one GET of one small file, no I/O | CPU us/request |", "|---|--:|"]
    lines += [f"| {what} | {micros:,.0f} |" for what, micros in pipelines(quick=quick)]
    lines += [
        "",
        "| Wenchang's own per-request work, alone | CPU us/request |",
        "|---|--:|",
        f"| the default rate limiter (in-process window) | "
        f"{limiter_micros(5_000 if quick else 50_000):,.1f} |",
        f"| bearer token resolution (digest + lookup in the token file's table) | "
        f"{resolver_micros():,.1f} |",
    ]
    return lines


def _asgi_micros(app: Any, path: str, requests: int = 2000) -> float:
    """CPU µs per GET through an ASGI app called in-process (no sockets)."""
    import asyncio

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"bench"), (b"authorization", b"Bearer t")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] == 200, message

    async def run() -> float:
        for _ in range(100):
            await app(dict(scope), receive, send)
        started = time.process_time()
        for _ in range(requests):
            await app(dict(scope), receive, send)
        return (time.process_time() - started) / requests * 1e6

    return asyncio.run(run())


def _tenchi_apps() -> dict[str, Any]:
    """Trivial Tenchi apps answering one small file: checked, passed through, ours."""
    from starlette.middleware import Middleware
    from starlette.responses import Response
    from tenchi.contracts import contract
    from tenchi.responses import PresentedResponse, present, response
    from tenchi.routes import route, route_group
    from tenchi.server import RequestInfo, create_app

    from app.server.http.front_door import FrontDoor

    body = _file()
    raw = body.__pydantic_serializer__.to_json(body)

    async def use_case(context: object) -> MemoryFile:
        return body

    async def hook(info: RequestInfo, context: object) -> None:
        return None

    passing = response(MemoryFile, status=200, passthrough=True)

    def passed(file: MemoryFile) -> PresentedResponse:
        answer = Response(raw, media_type="application/json")
        return present(passing, response=answer)

    checked = contract(method="GET", path="/file", response=MemoryFile, name="file")
    through = contract(method="GET", path="/file", responses=(passing,), name="file")
    ours = (Middleware(FrontDoor, resolver=_NoResolver()),)

    def build(declared: Any, middleware: Any = (), **binding: Any) -> Any:
        return create_app(
            routes=route_group(route(declared, use_case, **binding)),
            context_factory=lambda: object(),
            hooks=(hook,),
            middleware=middleware,
        )

    return {
        "Tenchi contract + route + hook, same body (response re-checked)": build(
            checked
        ),
        "the same, body passed through (`passthrough=True`)": build(
            through, present=passed
        ),
        "the same passed-through route + Wenchang's ASGI front door": build(
            through, ours, present=passed
        ),
    }


class _NoResolver:
    def resolve(self, credentials: str) -> Any:
        return None


def pipelines(*, quick: bool = False) -> list[tuple[str, float]]:
    """(app, CPU µs per request) for one trivial GET returning one small file."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    plain = _file().model_dump()

    async def bare(request: Any) -> JSONResponse:
        return JSONResponse(plain)

    rows = [
        (
            "bare Starlette route, JSONResponse",
            _asgi_micros(Starlette(routes=[Route("/file", bare)]), "/file"),
        )
    ]
    rows += [
        (label, _asgi_micros(app, "/file")) for label, app in _tenchi_apps().items()
    ]
    return rows


def resolver_micros() -> float:
    """CPU µs to resolve one bearer token against a token file."""
    import tempfile

    from app.infra.tokens.token_file import create_token
    from app.infra.tokens.token_file_resolver import TokenFileResolver
    from app.shared.identity import Grant

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "tokens.json"
        token, _ = create_token(path, {"user": Grant("someone", "owner")})
        resolver = TokenFileResolver(path)
        return _micros(lambda: resolver.resolve(token))


def limiter_micros(calls: int = 50_000) -> float:
    """CPU µs per request of the default rate limiter alone: the hook's own step
    (``require_allowance``) on the store the default settings open."""
    import asyncio
    from types import SimpleNamespace

    from app.infra.port_wiring import RATE_LIMIT_STORES, open_request_store
    from app.server.http.hooks import RateLimit, require_allowance
    from app.server.settings import DEFAULT_RATE_LIMIT, Settings

    policy = RateLimit(DEFAULT_RATE_LIMIT, 60)
    default_store = Settings.model_fields["rate_limit_store"].default

    async def spend() -> float:
        async with open_request_store(default_store, RATE_LIMIT_STORES) as store:
            context: Any = SimpleNamespace(rate_limits=store)
            started = time.process_time()
            for _ in range(calls):
                await require_allowance(context, "caller", policy)
            return (time.process_time() - started) * 1e6 / calls

    return asyncio.run(spend())
