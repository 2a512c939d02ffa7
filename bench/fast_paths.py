"""``python -m bench.fast_paths``: each fast path against the declared path.

Wenchang with ``WENCHANG_FAST_PATHS=on`` (``on``), with ``off`` (``off``), and
with every fast path but ``mcp_direct`` (``bench.variants``: ``no-direct``
answers every MCP tool call through the SDK's kernel), beside the Tenchi
floor, on copies of one dataset, in alternating rounds as the full suite runs
them. Prints medians of per-round ratios; writes
nothing. A fast path stays only for a gain of 10 % or more (``bench/RESULTS.md``).
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from bench.figures import cpu_ratio, p50, ratio, rps, x
from bench.report import machine
from bench.servers import LoadGenerator, Server, launch_server
from bench.suite import (
    BENCH_SETTINGS,
    FULL,
    HTTP_OPS,
    MCP_OPS,
    Bench,
    Results,
    running,
    sqlite_url,
)

# (server, surface, ops); variants run only the surface their path serves.
PLAN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("on", "http", HTTP_OPS),
    ("off", "http", HTTP_OPS),
    ("tenchi", "http", HTTP_OPS),
    ("on", "mcp", MCP_OPS),
    ("off", "mcp", MCP_OPS),
    ("no-direct", "mcp", MCP_OPS),
)
TARGETS = {
    "on": "app.server.asgi:app",
    "off": "app.server.asgi:app",
    "no-direct": "bench.variants:without_direct_calls",
}
# (what it shows, faster, slower, surface): each fast path's gain.
COMPARISONS = (
    ("passthrough", "on", "off", "http"),
    ("all fast paths, MCP", "on", "off", "mcp"),
    ("mcp_direct", "on", "no-direct", "mcp"),
    ("mcp_exchange", "no-direct", "off", "mcp"),
)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.fast_paths")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=FULL.duration)
    parser.add_argument("--ops", help="comma-separated scenarios (default: all)")
    return parser.parse_args(argv)


def _starters(bench: Bench, database: Path) -> dict[str, Callable[[], Server]]:
    def wenchang(name: str) -> Callable[[], Server]:
        env = {
            **BENCH_SETTINGS,
            "WENCHANG_STORAGE": sqlite_url(bench.copy(database, name)),
            "WENCHANG_TOKENS_FILE": str(bench.tokens_path),
            "WENCHANG_FAST_PATHS": "off" if name == "off" else "on",
        }
        target = TARGETS[name]
        return lambda: launch_server(name, target, workdir=bench.workdir, env=env)

    starters = {name: wenchang(name) for name in TARGETS}
    starters["tenchi"] = lambda: bench.floor(
        "tenchi", bench.copy(database, "tenchi"), "bench.tenchi_floor:app"
    )
    return starters


def _key(name: str, surface: str) -> str:
    return name if surface == "http" else f"{name}/mcp"


def _table(results: Results, ops: set[str] | None) -> list[str]:
    lines = [
        "| fast path | surface | op | c | req/s with / without | **with ÷ without**"
        " | CPU: without ÷ with | p50 ms with / without | with ÷ Tenchi floor |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for label, fast, slow, surface in COMPARISONS:
        scenarios = HTTP_OPS if surface == "http" else MCP_OPS
        for op in scenarios:
            if ops is not None and op not in ops:
                continue
            for c in results.profile.concurrency:
                top, bottom = _key(fast, surface), _key(slow, surface)
                floor = (
                    ratio(results, fast, "tenchi", op, c)
                    if surface == "http"
                    else float("nan")
                )
                lines.append(
                    f"| {label} | {surface} | {op} | {c} | "
                    f"{x(rps(results, top, op, c), 0)} / "
                    f"{x(rps(results, bottom, op, c), 0)} | "
                    f"**{x(ratio(results, top, bottom, op, c))}** | "
                    f"{x(cpu_ratio(results, top, bottom, op, c))} | "
                    f"{x(p50(results, top, op, c))} / "
                    f"{x(p50(results, bottom, op, c))} | "
                    f"{x(floor)} |"
                )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    ops = set(arguments.ops.split(",")) if arguments.ops else None
    profile = replace(FULL, rounds=arguments.rounds, duration=arguments.duration)
    results = Results(profile)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wenchang-fast-") as scratch:
        load = LoadGenerator()
        try:
            bench = Bench(profile, Path(scratch), load)
            database, tokens = bench.dataset("main")
            starters = _starters(bench, database)
            names = list(starters)
            with running(*starters.values()) as servers:
                by_name = dict(zip(names, servers, strict=True))
                for number in range(profile.rounds):
                    for surface, scenarios in (("http", HTTP_OPS), ("mcp", MCP_OPS)):
                        for op in scenarios:
                            if ops is not None and op not in ops:
                                continue
                            for c in profile.concurrency:
                                entrants = [
                                    name
                                    for name, on, planned in PLAN
                                    if on == surface and op in planned
                                ]
                                turn = number % len(entrants)
                                for name in entrants[turn:] + entrants[:turn]:
                                    run = bench.measure(
                                        by_name[name], op, c, tokens, surface=surface
                                    )
                                    key = (_key(name, surface), op, c)
                                    results.runs.setdefault(key, []).append(run)
                    print(f"round {number + 1} done", file=sys.stderr, flush=True)
        finally:
            load.close()
    elapsed = time.monotonic() - started
    print(f"Run: {machine()}\n")
    chosen = f" --ops {arguments.ops}" if arguments.ops else ""
    print(
        f"Mode: `python -m bench.fast_paths{chosen} --rounds {profile.rounds} "
        f"--duration {profile.duration}`: alternating rounds after "
        f"{profile.warmup} s warm-up; medians of per-round ratios; "
        f"{elapsed / 60:.1f} min.\n"
    )
    print("\n".join(_table(results, ops)))
    errors = sum(run.errors for runs in results.runs.values() for run in runs)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
