"""Feed latency: a write through one process to an SSE client and to a webhook.

``python -m bench.feed_latency [WRITES]`` starts two Wenchang servers on one
SQLite file, registers a webhook whose receiver runs in this process on
loopback (a trusted host), opens ``GET /v1/changes`` as an event stream on the
first server and writes ``WRITES`` files (default 100) one after another
through the second, each a random 0-250 ms after the previous one reached
both. For each it records the time from sending the write to the stream's
event and to the webhook's arrival (either server's delivery worker may send
it), and prints p50, p99 and max with the run's date and commit (for
``bench/RESULTS.md``).
"""

import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from bench.servers import ROOT, start_server

PAUSE_SECONDS = 0.25
LOOPBACK = "127.0.0.1"


class Arrivals:
    """When each version's first webhook delivery arrived (perf_counter)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.changed = threading.Condition()

    def record(self, version: str) -> None:
        with self.changed:
            self.at.setdefault(version, time.perf_counter())
            self.changed.notify_all()

    def wait(self, version: str) -> float:
        with self.changed:
            self.changed.wait_for(lambda: version in self.at, timeout=60)
            return self.at[version]


def _receiver(arrivals: Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            arrivals.record(json.loads(body)["data"]["version"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _table(measured: dict[str, list[float]]) -> str:
    rows = ["| measured (ms) | p50 | p99 | max |", "|---|--:|--:|--:|"]
    for label, values in measured.items():
        rows.append(
            f"| {label} | {statistics.median(values):.1f} | "
            f"{_percentile(values, 0.99):.1f} | {max(values):.1f} |"
        )
    return "\n".join(rows)


async def _measure(
    reader: str, writer: str, token: str, writes: int, hook: str
) -> dict[str, list[float]]:
    headers = {"Authorization": f"Bearer {token}"}
    to_event: list[float] = []
    to_webhook: list[float] = []
    arrivals = Arrivals()
    receiver = _receiver(arrivals)
    url = f"http://{LOOPBACK}:{receiver.server_address[1]}{hook}"
    async with (
        httpx.AsyncClient(base_url=reader, headers=headers, timeout=30) as sse,
        httpx.AsyncClient(base_url=writer, headers=headers, timeout=30) as http,
    ):
        added = await http.post("/v1/webhooks/user", json={"url": url})
        added.raise_for_status()
        async with sse.stream(
            "GET",
            "/v1/changes",
            params={"scope": "user"},
            headers={"accept": "text/event-stream"},
        ) as stream:
            lines = stream.aiter_lines()
            for index in range(writes):
                body = {"content": f"- [stated] {index}.\n", "description": "d"}
                sent = time.perf_counter()
                answer = await http.put(
                    f"/v1/files/user/bench/n{index}",
                    json={**body, "aliases": []},
                    headers={"If-None-Match": "*"},
                )
                version = answer.json()["version"]
                async for line in lines:
                    if line.startswith("data: ") and (
                        json.loads(line[6:])["version"] == version
                    ):
                        break
                to_event.append((time.perf_counter() - sent) * 1000)
                delivered = await asyncio.to_thread(arrivals.wait, version)
                to_webhook.append((delivered - sent) * 1000)
                await asyncio.sleep(random.uniform(0, PAUSE_SECONDS))
    receiver.shutdown()
    return {
        "write sent → SSE event received": to_event,
        "write sent → webhook received": to_webhook,
    }


def main(argv: list[str]) -> int:
    writes = int(argv[0]) if argv else 100
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        tokens = workdir / "tokens.json"
        token, _ = create_token(tokens, {"user": Grant("bench", "owner")})
        env = {
            "WENCHANG_STORAGE": f"sqlite:///{workdir / 'shared.db'}",
            "WENCHANG_TOKENS_FILE": str(tokens),
            "WENCHANG_RATE_LIMIT": "0",
            "WENCHANG_WEBHOOK_TRUSTED_HOSTS": LOOPBACK,
        }
        servers = [
            start_server(name, "app.server.asgi:app", workdir=workdir, env=env)
            for name in ("reader", "writer")
        ]
        try:
            measured = asyncio.run(
                _measure(servers[0].url, servers[1].url, token, writes, "/hook")
            )
        finally:
            for server in servers:
                server.stop()
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"Run: {now} · commit {commit} · {writes} writes · two servers, one "
        "SQLite file, both delivering webhooks"
    )
    print()
    print(_table(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
