"""Change-feed latency: a write through one process to an SSE client of another.

``python -m bench.change_feed [WRITES]`` starts two Wenchang servers on one
SQLite file, opens ``GET /v1/changes`` as an event stream on the first, and
writes ``WRITES`` files (default 200) one after another through the second,
each a random 0-250 ms after the previous one's event arrived (so writes
land at every phase of the stream's 200 ms poll). For each it records
the time from sending the write to receiving its event (an upper bound of
commit → event) and from the write's answer to the event, then prints p50, p99
and max with the run's date and commit (for ``bench/RESULTS.md``).
"""

import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from bench.servers import ROOT, start_server

PAUSE_SECONDS = 0.25


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _measure(reader: str, writer: str, token: str, writes: int) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    sent_to_event: list[float] = []
    answered_to_event: list[float] = []
    async with (
        httpx.AsyncClient(base_url=reader, headers=headers, timeout=30) as sse,
        httpx.AsyncClient(base_url=writer, headers=headers, timeout=30) as http,
        sse.stream(
            "GET",
            "/v1/changes",
            params={"scope": "user"},
            headers={"accept": "text/event-stream"},
        ) as stream,
    ):
        lines = stream.aiter_lines()
        for index in range(writes):
            body = {"content": f"- [stated] {index}.\n", "description": "d"}
            sent = time.perf_counter()
            answer = await http.put(
                f"/v1/files/user/bench/n{index}",
                json={**body, "aliases": []},
                headers={"If-None-Match": "*"},
            )
            answered = time.perf_counter()
            version = answer.json()["version"]
            async for line in lines:
                if line.startswith("data: ") and json.loads(line[6:])["version"] == (
                    version
                ):
                    break
            arrived = time.perf_counter()
            sent_to_event.append((arrived - sent) * 1000)
            answered_to_event.append((arrived - answered) * 1000)
            await asyncio.sleep(random.uniform(0, PAUSE_SECONDS))
    rows = [
        "| measured (ms) | p50 | p99 | max |",
        "|---|--:|--:|--:|",
    ]
    for label, values in (
        ("write sent → event received", sent_to_event),
        ("write answered → event received", answered_to_event),
    ):
        rows.append(
            f"| {label} | {statistics.median(values):.1f} | "
            f"{_percentile(values, 0.99):.1f} | {max(values):.1f} |"
        )
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    writes = int(argv[0]) if argv else 200
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
        }
        servers = [
            start_server(name, "app.server.asgi:app", workdir=workdir, env=env)
            for name in ("reader", "writer")
        ]
        try:
            table = asyncio.run(_measure(servers[0].url, servers[1].url, token, writes))
        finally:
            for server in servers:
                server.stop()
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"Run: {now} · commit {commit} · {writes} writes · two servers, one SQLite file"
    )
    print()
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
