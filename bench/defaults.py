"""``python -m bench.defaults``: the shipped configuration against no rate limiter.

Two servers on copies of one dataset: ``default`` with no settings but storage and
tokens (the rate limiter on, windows in process, the in-memory index cache), and
``unlimited``, the same with ``WENCHANG_RATE_LIMIT=0``. Reads and writes alternate
between them round by round; the report gives the median per-round ratio of
throughput and of server CPU per request, and rewrites its section of
``bench/RESULTS.md`` with the date, commit and mode. The target: the default within
5 % of ``unlimited``.
"""

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from tenchi.rate_limits import MemoryRateLimitStore, enforce_rate_limit

from app.server.hooks import RATE_LIMIT_NAMESPACE
from app.server.settings import DEFAULT_RATE_LIMIT
from bench.servers import LoadGenerator, launch_server
from bench.suite import FULL, Bench, Run, running, sqlite_url

RESULTS = Path(__file__).with_name("RESULTS.md")
BEGIN, END = "<!-- defaults:begin -->", "<!-- defaults:end -->"
OPS = ("read_file", "write_file")
SERVERS = {"default": {}, "unlimited": {"WENCHANG_RATE_LIMIT": "0"}}


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.defaults")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=1.5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--no-write", action="store_true", help="print only")
    return parser.parse_args(argv)


def measure(
    bench: Bench, rounds: int, concurrency: Sequence[int]
) -> dict[tuple[str, str, int], list[Run]]:
    database, tokens = bench.dataset("defaults")
    starters = [
        lambda name=name, extra=extra: launch_server(
            name,
            "app.server.asgi:app",
            workdir=bench.workdir,
            env={
                "WENCHANG_STORAGE": sqlite_url(bench.copy(database, name)),
                "WENCHANG_TOKENS_FILE": str(bench.tokens_path),
                **extra,
            },
        )
        for name, extra in SERVERS.items()
    ]
    runs: dict[tuple[str, str, int], list[Run]] = {}
    with running(*starters) as started:
        servers = dict(zip(SERVERS, started, strict=True))
        for number in range(rounds):
            for op in OPS:
                for c in concurrency:
                    order = list(servers) if number % 2 == 0 else list(servers)[::-1]
                    for name in order:
                        run = bench.measure(servers[name], op, c, tokens)
                        runs.setdefault((name, op, c), []).append(run)
    return runs


def ratio(runs: dict[tuple[str, str, int], list[Run]], op: str, c: int) -> tuple:
    pairs = zip(runs[("default", op, c)], runs[("unlimited", op, c)], strict=True)
    rps, cpu = [], []
    for default, unlimited in pairs:
        rps.append(default.rps / unlimited.rps)
        cpu.append(unlimited.cpu_us / default.cpu_us)
    errors = sum(r.errors for r in runs[("default", op, c)])
    medians = (
        statistics.median(r.rps for r in runs[("default", op, c)]),
        statistics.median(r.rps for r in runs[("unlimited", op, c)]),
    )
    return medians, statistics.median(rps), statistics.median(cpu), errors


async def _spend(calls: int) -> float:
    store = MemoryRateLimitStore()
    started = time.process_time()
    for _ in range(calls):
        await enforce_rate_limit(
            store,
            namespace=RATE_LIMIT_NAMESPACE,
            scope="caller",
            limit=DEFAULT_RATE_LIMIT,
            window_seconds=60,
        )
    return (time.process_time() - started) * 1e6 / calls


def limiter_cpu_us(calls: int = 50_000) -> float:
    """CPU per request of the default limiter alone (in-process window), in µs."""
    return asyncio.run(_spend(calls))


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], check=False)
    return done.stdout.strip() + ("+local changes" if dirty.returncode else "")


def render(
    runs: dict[tuple[str, str, int], list[Run]], arguments: argparse.Namespace
) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Default configuration against no rate limiter",
        "",
        f"`python -m bench.defaults --rounds {arguments.rounds} --duration "
        f"{arguments.duration}` on {when}, commit {commit()}, small mode: "
        f"{arguments.rounds} alternating rounds of {arguments.duration} s per "
        "server, op and concurrency, one SQLite dataset, this shared 2-core machine.",
        "",
        "| op | c | default req/s | `RATE_LIMIT=0` req/s | **throughput ratio** "
        "| **CPU per request ratio** | errors | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for op in OPS:
        for c in arguments.concurrency:
            (default, unlimited), rps, cpu, errors = ratio(runs, op, c)
            verdict = "met" if rps >= 0.95 else "missed"
            lines.append(
                f"| {op} | {c} | {default:,.0f} | {unlimited:,.0f} | {rps:.3f} "
                f"| {cpu:.3f} | {errors} | ≥ 0.95: {verdict} |"
            )
    spent = limiter_cpu_us()
    request = statistics.median(
        r.cpu_us for r in runs[("unlimited", "read_file", max(arguments.concurrency))]
    )
    lines += [
        "",
        f"The limiter alone, measured in isolation: {spent:.1f} µs of CPU per request, "
        f"{100 * spent / request:.2f} % of the {request:,.0f} µs a read costs the "
        "server without it: the bound on what the default can cost, whatever the "
        "noise in the end-to-end ratios above.",
        "",
        "Ratios are medians of per-round ratios (default ÷ unlimited for "
        "throughput, unlimited ÷ default for CPU per request: 1.0 means no cost). "
        "The default counts each request in the process (no storage write), and its "
        "limit (100,000 per 60 s) is never reached here, so `errors` are real errors, "
        "not 429s.",
        "",
    ]
    return "\n".join(lines)


def write(section: str) -> None:
    text = RESULTS.read_text()
    block = f"{BEGIN}\n{section}{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    profile = replace(FULL, duration=arguments.duration, warmup=0.3)
    load = LoadGenerator()
    try:
        with tempfile.TemporaryDirectory(prefix="wenchang-defaults-") as scratch:
            bench = Bench(profile, Path(scratch), load)
            runs = measure(bench, arguments.rounds, arguments.concurrency)
    finally:
        load.close()
    section = render(runs, arguments)
    print(section)
    if not arguments.no_write:
        write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
