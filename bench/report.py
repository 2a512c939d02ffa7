"""The result tables, as markdown: printed by the command and kept in RESULTS.md.

Every table states its targets beside the figure (✅/❌); the summary at the top
of the block lists every target of the run.
"""

import os
import platform
import sqlite3
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench import sections
from bench.figures import Verdicts, cpu, cpu_ratio, errors, p50, ratio, rps, x
from bench.servers import ROOT, can_pin
from bench.suite import HTTP_OPS, MCP_OPS, Results

FLOOR_TARGETS = {
    "read_file": 0.6,
    "write_file": 0.5,
    "append_line": 0.5,
    "replace_fact": 0.5,
    "get_memory_index": 0.6,
    "mixed": 0.5,
}
TENCHI_TARGET = 0.85
MCP_TARGETS = {"get_memory_index": 2.0}
MCP_TARGET = 1.5
REVALIDATION_TARGET = 5.0
DEFAULT_TARGET = 0.95


def http_table(results: Results, verdicts: Verdicts) -> list[str]:
    lines = [
        "| op | c | Wenchang req/s | Tenchi floor req/s | bare floor req/s "
        "| **Wenchang ÷ Tenchi floor** | target | **Tenchi floor ÷ bare** "
        "| **Wenchang ÷ bare** | target | CPU µs/req W / T / B "
        "| CPU: T ÷ W | CPU: B ÷ T | p50 ms W / T / B | errors W/T/B |",
        "|---|--:|--:|--:|--:|--:|---|--:|--:|---|--:|--:|--:|--:|---|",
    ]
    for op in HTTP_OPS:
        for c in results.profile.concurrency:
            if not (results.runs.get(("wenchang", op, c))):
                continue
            ours = ratio(results, "wenchang", "tenchi", op, c)
            share = ratio(results, "tenchi", "floor", op, c)
            bare = ratio(results, "wenchang", "floor", op, c)
            names = ("wenchang", "tenchi", "floor")
            label = f"HTTP {op} c={c}: Wenchang ÷"
            against_tenchi = verdicts.check(
                f"{label} Tenchi floor", ours, TENCHI_TARGET
            )
            against_bare = verdicts.check(
                f"{label} bare floor", bare, FLOOR_TARGETS[op]
            )
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'wenchang', op, c), 0)} "
                f"| {x(rps(results, 'tenchi', op, c), 0)} "
                f"| {x(rps(results, 'floor', op, c), 0)} | **{x(ours)}** "
                f"| {against_tenchi} | **{x(share)}** | **{x(bare)}** | {against_bare} "
                f"| {' / '.join(x(cpu(results, n, op, c), 0) for n in names)} "
                f"| {x(cpu_ratio(results, 'wenchang', 'tenchi', op, c))} "
                f"| {x(cpu_ratio(results, 'tenchi', 'floor', op, c))} "
                f"| {' / '.join(x(p50(results, n, op, c)) for n in names)} "
                f"| {'/'.join(str(errors(results, n, op, c)) for n in names)} |"
            )
    return lines


def defaults_table(results: Results, verdicts: Verdicts) -> list[str]:
    lines = [
        "| op | c | shipped default req/s | like-for-like req/s "
        "| default ÷ like-for-like | default ÷ bare floor "
        "| CPU µs/req default / like-for-like | errors |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for op in HTTP_OPS:
        for c in results.profile.concurrency:
            if not results.runs.get(("default", op, c)):
                continue
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'default', op, c), 0)} "
                f"| {x(rps(results, 'wenchang', op, c), 0)} "
                f"| {x(ratio(results, 'default', 'wenchang', op, c))} "
                f"| {x(ratio(results, 'default', 'floor', op, c))} "
                f"| {x(cpu(results, 'default', op, c), 0)} / "
                f"{x(cpu(results, 'wenchang', op, c), 0)} "
                f"| {errors(results, 'default', op, c)} |"
            )
    lines += [
        "",
        "| op | c | default req/s | `WENCHANG_RATE_LIMIT=0` req/s "
        "| **default ÷ RATE_LIMIT=0** | target | CPU: unlimited ÷ default |",
        "|---|--:|--:|--:|--:|---|--:|",
    ]
    for op in ("read_file", "write_file"):
        for c in results.profile.concurrency:
            value = ratio(results, "default", "unlimited", op, c)
            cell = (
                verdicts.check(
                    f"{op} c=1: default ÷ RATE_LIMIT=0", value, DEFAULT_TARGET
                )
                if c == 1
                else "(no target)"
            )
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'default', op, c), 0)} "
                f"| {x(rps(results, 'unlimited', op, c), 0)} | **{x(value, 3)}** "
                f"| {cell} "
                f"| {x(cpu_ratio(results, 'default', 'unlimited', op, c), 3)} |"
            )
    return lines


def revalidation_table(results: Results, verdicts: Verdicts) -> list[str]:
    lines = [
        "| server | c | full index req/s | 304 req/s | **304 ÷ full** | target "
        "| CPU µs/req full / 304 | p50 ms full / 304 |",
        "|---|--:|--:|--:|--:|---|--:|--:|",
    ]
    full, again = "get_memory_index", "index_revalidation"
    for name, label in (
        ("wenchang", "like for like (no index cache)"),
        ("default", "shipped default (memory cache)"),
    ):
        for c in results.profile.concurrency:
            if not results.runs.get((name, again, c)):
                continue
            value = ratio(results, name, name, again, c, bottom_op=full)
            what = f"304 revalidation ÷ full index, {name} c={c}"
            lines.append(
                f"| {label} | {c} | {x(rps(results, name, full, c), 0)} "
                f"| {x(rps(results, name, again, c), 0)} | **{x(value, 1)}** "
                f"| {verdicts.check(what, value, REVALIDATION_TARGET)} "
                f"| {x(cpu(results, name, full, c), 0)} / "
                f"{x(cpu(results, name, again, c), 0)} "
                f"| {x(p50(results, name, full, c))} / "
                f"{x(p50(results, name, again, c))} |"
            )
    return lines


def mcp_table(results: Results, verdicts: Verdicts) -> list[str]:
    if not results.mcp_available:
        return ["MCP was not available in this run."]
    lines = [
        "| tool | c | MCP req/s | MCP p50 ms | p99 ms | HTTP p50 ms "
        "| **MCP ÷ HTTP p50** | target | CPU µs/call MCP / HTTP "
        "| MCP SDK floor p50 ms | **SDK floor ÷ bare HTTP floor p50** "
        "| CPU µs/call SDK floor / bare floor | errors |",
        "|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|",
    ]
    from bench.figures import latency_ratio, median, runs

    for op in MCP_OPS:
        for c in results.profile.concurrency:
            if not runs(results, "mcp", op, c):
                continue
            value = latency_ratio(results, "mcp", "wenchang", op, c)
            target = MCP_TARGETS.get(op, MCP_TARGET)
            what = f"MCP {op} c={c}: p50 ÷ HTTP p50"
            p99 = median([r.p99_ms for r in runs(results, "mcp", op, c)])
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'mcp', op, c), 0)} "
                f"| {x(p50(results, 'mcp', op, c))} | {x(p99)} "
                f"| {x(p50(results, 'wenchang', op, c))} | **{x(value)}** "
                f"| {verdicts.check(what, value, target, at_most=True)} "
                f"| {x(cpu(results, 'mcp', op, c), 0)} / "
                f"{x(cpu(results, 'wenchang', op, c), 0)} "
                f"| {x(p50(results, 'mcp-floor', op, c))} "
                f"| **{x(latency_ratio(results, 'mcp-floor', 'floor', op, c))}** "
                f"| {x(cpu(results, 'mcp-floor', op, c), 0)} / "
                f"{x(cpu(results, 'floor', op, c), 0)} "
                f"| {errors(results, 'mcp', op, c)} |"
            )
    return lines


def _commit() -> str:
    def git(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=False
        )

    try:
        commit = git("rev-parse", "--short", "HEAD").stdout.strip()
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except OSError:
        return "?"
    return (commit or "?") + (" + uncommitted changes" if dirty else "")


def machine() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    models = [
        line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")
    ]
    cpu_name = models[0] if models else (platform.processor() or platform.machine())
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    pinned = "server on core 0, load generator on core 1" if can_pin() else "not pinned"
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · commit {_commit()} · {cpu_name} · "
        f"{os.cpu_count()} cores · Python {platform.python_version()} · SQLite "
        f"{sqlite3.sqlite_version} · {pinned} · load average at the end {load}"
    )


def render(
    results: Results,
    elapsed: float,
    structural: Sequence[str] = (),
) -> str:
    profile = results.profile
    verdicts = Verdicts()
    body = [
        "### HTTP: Wenchang ÷ Tenchi floor ÷ bare floor (throughput, like for like)",
        "",
        *http_table(results, verdicts),
        "",
        "### The shipped default configuration",
        "",
        *defaults_table(results, verdicts),
        "",
        "### Conditional index: `If-None-Match` (304) against a full index",
        "",
        *revalidation_table(results, verdicts),
        "",
        "### MCP streamable HTTP ÷ HTTP (p50 latency of the same operation)",
        "",
        *mcp_table(results, verdicts),
        *sections.render(results, verdicts),
    ]
    if structural:
        body += [
            "",
            "### Costs outside Wenchang's code, in isolation (CPU, in-process)",
        ]
        body += ["", *structural]
    failures = [
        f"{sum(r.errors for r in measured)} error(s) in {name} {op} c={c}, e.g. "
        f"`{next(sample for r in measured for sample in r.samples)}`"
        for (name, op, c), measured in results.runs.items()
        if any(r.samples for r in measured) and any(r.errors for r in measured)
    ]
    if results.notes or failures:
        body += ["", *(f"- {note}" for note in [*results.notes, *failures])]
    head = [
        f"Run: {machine()}",
        "",
        f"Mode: profile `{profile.name}` (`python -m bench --profile {profile.name}`): "
        f"{profile.rounds} alternating round(s) of {profile.duration:g} s per run "
        f"after {profile.warmup:g} s warm-up; medians of per-round, side-by-side "
        f"ratios. Suite time {elapsed / 60:.1f} min. Every figure below is from this "
        "run.",
        "",
        "### Targets",
        "",
        *verdicts.summary(),
        "",
    ]
    return "\n".join(head + body) + "\n"
