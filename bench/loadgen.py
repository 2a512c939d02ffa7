"""A keep-alive HTTP/1.1 load generator: N connections, each one request at a time.

Run as its own process (``python -m bench.loadgen``), pinned to a core the
server does not use; it reads one JSON spec per line and prints one result line.
Each connection owns its files (``w<i>``/``a<i>``), so writes never conflict
with one another: any non-2xx answer, tool error or broken connection counts as
an error. Requests that complete during the warm-up are not measured.
"""

import asyncio
import contextlib
import json
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

APPEND_RESET = 48
"""Appends to one file before it is rewritten (uncounted), so files stay small."""
BASE_CONTENT = "# Bench\n\n- [stated] Starting point for the benchmark.\n"
WRITE_BODY = {
    "content": (
        "# Tea\n\n- [stated] Prefers green tea in the morning.\n"
        "- [observed] Switches to oolong after lunch.\n"
    ),
    "description": "Tea preferences, rewritten by the benchmark",
    "aliases": ["drinks", "tea"],
}
REPLACEMENTS = (("green tea", "black tea"), ("black tea", "green tea"))
"""A replace_fact step and its inverse: the seeded files name "green tea" once."""
HISTORY_SCENARIOS = ("list_versions", "read_version")
VERSION = re.compile(rb'\\?"version\\?":\s*\\?"([^"\\]+)')


class Failed(Exception):
    """A request got an answer that is not a success."""


FAILURES = (Failed, OSError, asyncio.IncompleteReadError, ValueError)


@dataclass
class Response:
    status: int
    headers: dict[bytes, bytes]
    body: bytes

    def version(self, *, from_body: bool = False) -> str:
        etag = None if from_body else self.headers.get(b"etag")
        if etag is not None:
            return etag.decode().strip('"')
        found = VERSION.search(self.body)
        if found is None:
            raise Failed(f"no version in {self.body[:200]!r}")
        return found.group(1).decode()


class Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.sent = 0
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes = b"",
    ) -> Response:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        if body or method in ("PUT", "POST"):
            head.append(f"Content-Length: {len(body)}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        self.sent += 1
        try:
            return await self._read()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            raise

    async def _read(self) -> Response:
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw[:-4].split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            body = await self._chunked()
        else:
            body = await self.reader.readexactly(int(headers.get(b"content-length", 0)))
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()
        return Response(status, headers, body)

    async def _chunked(self) -> bytes:
        assert self.reader is not None
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)


@dataclass
class Spec:
    host: str
    port: int
    scenario: str
    surface: str
    concurrency: int
    duration: float
    warmup: float
    reader_token: str
    writer_token: str
    read_files: list[list[str]]
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


def _file_path(scope: str, area: str, name: str) -> str:
    return f"/v1/files/{quote(scope, '')}/{quote(area, '')}/{quote(name, '')}"


class Client:
    """One connection's scenario state: its files and their current versions."""

    def __init__(self, spec: Spec, number: int) -> None:
        self.spec = spec
        self.number = number
        self.connection = Connection(spec.host, spec.port)
        self.random = random.Random(spec.seed * 1000 + number)
        self.versions: dict[str, str] = {}
        self.appends = 0
        self.replaced = 0
        self.searched = number * 7
        self.index_tag = ""
        self.history_version = ""
        self.rpc_id = 0
        self.read_auth = {"Authorization": f"Bearer {spec.reader_token}"}
        self.write_auth = {"Authorization": f"Bearer {spec.writer_token}"}

    @property
    def write_name(self) -> str:
        return f"w{self.number}"

    @property
    def append_name(self) -> str:
        return f"a{self.number}"

    @property
    def replace_name(self) -> str:
        return f"r{self.number}"

    async def http(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: Any = None,
        *,
        expect: int | None = None,
    ) -> Response:
        payload = b""
        if body is not None:
            payload = json.dumps(body).encode()
            headers = {**headers, "Content-Type": "application/json"}
        response = await self.connection.request(method, path, headers, payload)
        ok = response.status == expect if expect else 200 <= response.status < 300
        if not ok:
            raise Failed(f"{method} {path}: {response.status} {response.body[:300]!r}")
        return response

    async def tool(self, name: str, arguments: dict[str, Any], token: str) -> Response:
        self.rpc_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.rpc_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        }
        response = await self.http("POST", "/mcp", headers, message)
        if b'"isError":true' in response.body or b'"error":{' in response.body[:200]:
            raise Failed(f"tool {name}: {response.body[:300]!r}")
        return response

    async def refresh(self, name: str) -> None:
        """Learn the current version of one of this client's files (uncounted)."""
        if self.spec.surface == "mcp":
            where = {"scope": "user", "area": "bench", "name": name}
            response = await self.tool("read_file", where, self.spec.writer_token)
            self.versions[name] = response.version(from_body=True)
            return
        path = _file_path("user", "bench", name)
        self.versions[name] = (await self.http("GET", path, self.write_auth)).version()

    async def setup(self) -> None:
        scenario = self.spec.scenario
        if scenario in ("write_file", "append_line", "mixed", *HISTORY_SCENARIOS):
            await self.refresh(self.write_name)
            await self.refresh(self.append_name)
            await self.reset_appends()
        if scenario == "replace_fact":
            await self.sync_replace()
        if scenario == "index_revalidation":
            response = await self.http("GET", "/v1/index", self.read_auth)
            self.index_tag = response.headers[b"etag"].decode()
        if scenario in HISTORY_SCENARIOS:
            path = _file_path("user", "bench", self.append_name) + "/versions"
            listing = await self.http("GET", path, self.write_auth)
            self.history_version = json.loads(listing.body)["entries"][0]["version"]

    async def reset_appends(self) -> None:
        name = self.append_name
        body = {
            "content": BASE_CONTENT,
            "description": "Appended by the benchmark",
            "aliases": ["bench"],
        }
        if self.spec.surface == "mcp":
            arguments = {"scope": "user", "area": "bench", "name": name, **body}
            arguments["expected_version"] = self.versions[name]
            response = await self.tool("write_file", arguments, self.spec.writer_token)
        else:
            headers = {**self.write_auth, "If-Match": f'"{self.versions[name]}"'}
            path = _file_path("user", "bench", name)
            response = await self.http("PUT", path, headers, body)
        self.versions[name] = response.version()
        self.appends = 0

    # Scenario steps: each is one measured request.

    async def read_file(self) -> None:
        scope, area, name = self.random.choice(self.spec.read_files)
        if self.spec.surface == "mcp":
            arguments = {"scope": scope, "area": area, "name": name}
            await self.tool("read_file", arguments, self.spec.reader_token)
        else:
            await self.http("GET", _file_path(scope, area, name), self.read_auth)

    async def write_file(self) -> None:
        name = self.write_name
        if self.spec.surface == "mcp":
            arguments = {
                "scope": "user",
                "area": "bench",
                "name": name,
                **WRITE_BODY,
                "expected_version": self.versions[name],
            }
            response = await self.tool("write_file", arguments, self.spec.writer_token)
        else:
            headers = {**self.write_auth, "If-Match": f'"{self.versions[name]}"'}
            path = _file_path("user", "bench", name)
            response = await self.http("PUT", path, headers, WRITE_BODY)
        self.versions[name] = response.version()

    async def append_line(self) -> None:
        name = self.append_name
        line = f"- [stated] Benchmark fact {self.appends} from client {self.number}"
        if self.spec.surface == "mcp":
            arguments = {
                "scope": "user",
                "area": "bench",
                "name": name,
                "line": line,
                "expected_version": self.versions[name],
            }
            response = await self.tool("append_line", arguments, self.spec.writer_token)
        else:
            headers = {**self.write_auth, "If-Match": f'"{self.versions[name]}"'}
            path = _file_path("user", "bench", name) + "/lines"
            response = await self.http("POST", path, headers, {"line": line})
        self.versions[name] = response.version()
        self.appends += 1

    async def get_memory_index(self) -> None:
        if self.spec.surface == "mcp":
            await self.tool("get_memory_index", {}, self.spec.reader_token)
        else:
            await self.http("GET", "/v1/index", self.read_auth)

    async def replace_fact(self) -> None:
        """Swap one phrase of this client's file back and forth (one span each way)."""
        name = self.replace_name
        old, new = REPLACEMENTS[self.replaced % 2]
        headers = {**self.write_auth, "If-Match": f'"{self.versions[name]}"'}
        path = _file_path("user", "bench", name) + "/replace"
        body = {"old_string": old, "new_string": new}
        response = await self.http("POST", path, headers, body)
        self.versions[name] = response.version()
        self.replaced += 1

    async def index_revalidation(self) -> None:
        """The index again, holding its ETag: 304 and no body while it is current."""
        headers = {**self.read_auth, "If-None-Match": self.index_tag}
        await self.http("GET", "/v1/index", headers, expect=304)

    async def list_versions(self) -> None:
        path = _file_path("user", "bench", self.append_name) + "/versions"
        await self.http("GET", path, self.write_auth)

    async def read_version(self) -> None:
        path = _file_path("user", "bench", self.append_name)
        path += f"/versions/{quote(self.history_version, '')}"
        await self.http("GET", path, self.write_auth)

    async def search_memory(self) -> None:
        queries: list[str] = self.spec.extra["queries"]
        query = queries[self.searched % len(queries)]
        self.searched += 1
        await self.http("GET", f"/v1/search?q={quote(query)}", self.read_auth)

    async def mixed(self) -> None:
        if self.random.random() < 0.8:
            path = _file_path("user", "bench", self.append_name)
            await self.http("GET", path, self.write_auth)
        else:
            await self.append_line()

    async def between(self) -> None:
        """Uncounted housekeeping after a step."""
        if self.appends >= APPEND_RESET:
            await self.reset_appends()

    async def recover(self) -> None:
        for name in list(self.versions):
            await self.refresh(name)
        if self.spec.scenario == "replace_fact":
            await self.sync_replace()

    async def sync_replace(self) -> None:
        """Learn the replace file's version and which way the next swap goes."""
        path = _file_path("user", "bench", self.replace_name)
        response = await self.http("GET", path, self.write_auth)
        self.versions[self.replace_name] = response.version()
        self.replaced = 0 if b"green tea" in response.body else 1


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list[float])
    errors: int = 0
    samples: list[str] = field(default_factory=list[str])


async def drive(
    client: Client,
    step: Callable[[], Awaitable[None]],
    tally: Tally,
    start: float,
    end: float,
) -> None:
    clock = time.perf_counter
    while (now := clock()) < end:
        failed = None
        try:
            await step()
        except FAILURES as exc:
            failed = exc
        finished = clock()
        # Throughput counts completions inside the window, so a request slower
        # than the warm-up still counts once it lands.
        if start <= finished <= end:
            if failed is None:
                tally.latencies.append(finished - now)
            else:
                tally.errors += 1
        if failed is not None:
            if len(tally.samples) < 3:
                tally.samples.append(str(failed)[:300])
            await asyncio.sleep(0.01)
            with contextlib.suppress(*FAILURES):
                await client.recover()
        else:
            await client.between()


def _percentile(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def run(spec: Spec) -> dict[str, Any]:
    clients = [Client(spec, number) for number in range(spec.concurrency)]
    await asyncio.gather(*(client.setup() for client in clients))
    tally = Tally()
    start = time.perf_counter() + spec.warmup
    end = start + spec.duration
    await asyncio.gather(
        *(drive(c, getattr(c, spec.scenario), tally, start, end) for c in clients)
    )
    for client in clients:
        client.connection.close()
    sent = sum(client.connection.sent for client in clients)
    ordered = sorted(tally.latencies)
    return {
        "requests": len(ordered),
        "errors": tally.errors,
        "rps": len(ordered) / spec.duration,
        "p50_ms": _percentile(ordered, 0.50) * 1000,
        "p95_ms": _percentile(ordered, 0.95) * 1000,
        "p99_ms": _percentile(ordered, 0.99) * 1000,
        "error_samples": tally.samples,
        "sent": sent,
    }


async def serve_specs() -> None:
    """Read one spec per stdin line, answer one result per stdout line."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        try:
            result = await run(Spec(**json.loads(line)))
        except (*FAILURES, KeyError, IndexError) as exc:
            # A scenario whose set-up fails is one error, not a dead generator.
            result = {
                "requests": 0,
                "errors": 1,
                "rps": 0.0,
                "p50_ms": float("nan"),
                "p95_ms": float("nan"),
                "p99_ms": float("nan"),
                "error_samples": [f"set-up failed: {exc!r}"[:300]],
                "sent": 0,
            }
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


def main() -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve_specs())
    else:
        uvloop.run(serve_specs())


if __name__ == "__main__":
    main()
