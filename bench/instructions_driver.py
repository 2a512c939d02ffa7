"""The measured process of ``bench.instructions``: one tree's app, driven in process.

Run as a script by ``bench.instructions`` (never imported), from a scratch
directory: ``python instructions_driver.py TREE OP WARMUP COUNT
[--callgrind | --sql | --bytecodes FILE]``. It imports ``bench`` and ``app`` of
``TREE``, so one driver measures any checkout whose ``bench.seed`` and
``app.server.asgi`` have the shapes used here (c36c26e onwards).
"""

import asyncio
import importlib
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import CodeType
from typing import Any
from urllib.parse import quote

sys.path[0] = sys.argv[1]  # the measured tree, not this file's folder
OP, WARMUP, COUNT = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
CALLGRIND = "--callgrind" in sys.argv
SQL = "--sql" in sys.argv
BYTECODES = (
    sys.argv[sys.argv.index("--bytecodes") + 1] if "--bytecodes" in sys.argv else ""
)

Message = dict[str, Any]
statements: Counter[str] = Counter()
tracing = False


def _traced_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    """``sqlite3.connect`` with every statement counted while ``tracing``."""
    connection = connect(*args, **kwargs)

    def trace(statement: str) -> None:
        if tracing:
            shape = re.sub(r"x?'[^']*'|\b\d[\d.]*\b", "?", " ".join(statement.split()))
            statements[shape[:110]] += 1

    connection.set_trace_callback(trace)
    return connection


connect = sqlite3.connect
if SQL:
    sqlite3.connect = _traced_connect

from bench.seed import index_files, write_database, write_tokens  # noqa: E402
from bench.suite import BENCH_SETTINGS  # noqa: E402

work = Path.cwd()
write_database(work / "bench.db")
tokens = write_tokens(work / "tokens.json")
for name in [k for k in os.environ if k.startswith("WENCHANG_")]:
    del os.environ[name]
os.environ.update(BENCH_SETTINGS)
os.environ["WENCHANG_STORAGE"] = f"sqlite:///{work / 'bench.db'}"
os.environ["WENCHANG_TOKENS_FILE"] = str(work / "tokens.json")

from app.infra import audit_buffer  # noqa: E402
from app.server.asgi import app  # noqa: E402

# Timers fire per wall-clock second, and valgrind runs ~50x slower: their work
# would land on ever fewer requests. The audit buffer writes by count only (as
# under load), and the search drain never runs (a search indexes what it needs).
kwdefaults = audit_buffer.AuditBuffer.__init__.__kwdefaults__
assert kwdefaults is not None
kwdefaults["max_delay"] = 1e6
for module in ("app.infra.sqlite.search_drain", "app.infra.sqlite_search_drain"):
    try:
        drain_module = importlib.import_module(module)
    except ImportError:
        continue

    async def no_drain(index: object, stop: asyncio.Event, every: float) -> None:
        await stop.wait()

    drain_module._drain = no_drain  # both trees' drain loop, by its one name
for module in ("app.infra.tokens.token_file_resolver", "app.infra.token_file_resolver"):
    try:
        resolver_module = importlib.import_module(module)
    except ImportError:
        continue
    # The token file is read again once a second: read once, at start-up.
    resolver_module.RELOAD_INTERVAL_SECONDS = 1e6
try:
    from app.server import webhook_worker
except ImportError:  # a tree from before webhooks
    pass
else:
    # Its delivery round (every 0.25 s, four a second under real load) would
    # come every few requests under valgrind: it runs once, at start-up.
    webhook_worker.POLL_SECONDS = 1e6


def path_of(scope: str, area: str, name: str) -> str:
    return f"/v1/files/{quote(scope, '')}/{quote(area, '')}/{quote(name, '')}"


async def call(
    method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One HTTP request handed to the app as an ASGI call."""
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw.append((b"host", b"127.0.0.1:8000"))
    if body:
        raw.append((b"content-length", str(len(body)).encode()))
    scope: Message = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent = False
    status = 0
    answer: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            answer.extend(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, dict(answer), b"".join(chunks)


async def lifespan(ready: asyncio.Event, stop: asyncio.Event) -> None:
    """The app's lifespan: started, kept until ``stop``, then shut down."""
    queue: asyncio.Queue[Message] = asyncio.Queue()
    await queue.put({"type": "lifespan.startup"})

    async def send(message: Message) -> None:
        if message["type"] != "lifespan.startup.complete":
            print(message, file=sys.stderr)
        ready.set()

    task = asyncio.ensure_future(
        app(
            {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
            queue.get,
            send,
        )
    )
    await stop.wait()
    await queue.put({"type": "lifespan.shutdown"})
    await task


executed: Counter[CodeType] = Counter()


def _executed(code: CodeType, offset: int) -> None:
    executed[code] += 1


def _function(code: CodeType) -> str:
    """A code object as ``path:qualname``, the path from its tree or package."""
    path = code.co_filename
    tree, driver = sys.argv[1].rstrip("/") + "/", f"{Path(__file__).parent.parent}/"
    for root in ("site-packages/", tree, driver, "/lib/python"):
        if root in path:
            path = path.split(root, 1)[1]
            break
    return f"{path}:{code.co_qualname}"


def _count_bytecodes(start: bool) -> None:
    """Bytecode instructions run per code object while counting (sys.monitoring)."""
    monitoring = sys.monitoring
    tool = monitoring.PROFILER_ID
    if start:
        monitoring.use_tool_id(tool, "bench.instructions")
        monitoring.register_callback(tool, monitoring.events.INSTRUCTION, _executed)
        monitoring.set_events(tool, monitoring.events.INSTRUCTION)
        return
    monitoring.set_events(tool, monitoring.events.NO_EVENTS)
    monitoring.free_tool_id(tool)
    per_request: dict[str, float] = {}
    for code, times in executed.items():
        function = _function(code)
        per_request[function] = per_request.get(function, 0) + times / COUNT
    Path(BYTECODES).write_text(json.dumps(per_request))


def control(flag: str) -> None:
    if CALLGRIND:
        command = ["callgrind_control", flag, str(os.getpid())]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    if BYTECODES:
        _count_bytecodes(start=flag == "-z")


async def requests() -> Callable[[int], Awaitable[None]]:
    """The request of ``OP`` numbered ``n``."""
    chosen = random.Random(7)
    files = [(f.scope, f.area, f.name) for f in index_files()]
    reader = {"Authorization": f"Bearer {tokens.reader}"}
    writer = {"Authorization": f"Bearer {tokens.writer}"}
    names = [f"a{i}" for i in range(64)]
    versions: dict[str, str] = {}
    if OP == "append":
        for name in names:
            status, headers, _ = await call(
                "GET", path_of("user", "bench", name), writer
            )
            assert status == 200, status
            versions[name] = headers[b"etag"].decode().strip('"')

    async def read(n: int) -> None:
        status, _, body = await call("GET", path_of(*chosen.choice(files)), reader)
        assert status == 200, (status, body)

    async def append(n: int) -> None:
        name = names[n % 64]
        headers = {
            **writer,
            "If-Match": f'"{versions[name]}"',
            "Content-Type": "application/json",
        }
        body = b'{"line": "- [stated] Benchmark fact %d from client 0"}' % n
        path = path_of("user", "bench", name) + "/lines"
        status, answer, _ = await call("POST", path, headers, body)
        assert status == 200, (status, answer)
        versions[name] = answer[b"etag"].decode().strip('"')

    return read if OP == "read" else append


async def main() -> None:
    global tracing
    ready, stop = asyncio.Event(), asyncio.Event()
    life = asyncio.ensure_future(lifespan(ready, stop))
    await ready.wait()
    one = await requests()
    for n in range(WARMUP):
        await one(n)
    control("-z")
    tracing = True
    for n in range(WARMUP, WARMUP + COUNT):
        await one(n)
    control("-d")
    tracing = False
    for statement, times in statements.most_common():
        print(f"{times / COUNT:6.2f} {statement}")
    stop.set()
    await life


asyncio.run(main())
