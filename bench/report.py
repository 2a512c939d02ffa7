"""The ratio tables, as markdown: printed by the command and kept in RESULTS.md."""

import os
import platform
import sqlite3
import statistics
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench.servers import ROOT, can_pin
from bench.suite import HTTP_OPS, MCP_OPS, Results, Run

TARGETS = {
    "read_file": 0.6,
    "write_file": 0.5,
    "append_line": 0.5,
    "get_memory_index": 0.5,
}
MCP_TARGET = 1.5


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _x(value: float, digits: int = 2) -> str:
    """A number for a table cell; a dash when nothing was measured."""
    return "-" if value != value else f"{value:,.{digits}f}"


def _ratios(results: Results, top: str, bottom: str, op: str, c: int) -> list[float]:
    """Per-round throughput ratios top ÷ bottom (same round, back to back)."""
    tops = results.runs.get((top, op, c), [])
    bottoms = results.runs.get((bottom, op, c), [])
    return [t.rps / b.rps for t, b in zip(tops, bottoms, strict=False) if b.rps]


def _latency_ratios(
    results: Results, op: str, c: int, name: str = "mcp"
) -> list[float]:
    mcp = results.runs.get((name, op, c), [])
    http = results.runs.get(("wenchang", op, c), [])
    return [m.p50_ms / h.p50_ms for m, h in zip(mcp, http, strict=False) if h.p50_ms]


def _summary(runs: Sequence[Run]) -> tuple[str, str, str, int, float]:
    rps = _median([r.rps for r in runs])
    p50 = _median([r.p50_ms for r in runs])
    p99 = _median([r.p99_ms for r in runs])
    return (
        _x(rps, 0),
        _x(p50),
        _x(p99),
        sum(r.errors for r in runs),
        max((r.rss_mb for r in runs), default=0.0),
    )


def _verdict(value: float, target: float | None, *, at_most: bool = False) -> str:
    if target is None or value != value:
        return "-"
    ok = value <= target if at_most else value >= target
    return f"{'✅' if ok else '❌'} {'≤' if at_most else '≥'} {target}"


def _cpu_ratios(results: Results, top: str, op: str, c: int) -> list[float]:
    """Per-round CPU-cost ratios floor ÷ ``top``: 1.0 means as cheap as the floor."""
    tops = results.runs.get((top, op, c), [])
    floors = results.runs.get(("floor", op, c), [])
    return [f.cpu_us / t.cpu_us for t, f in zip(tops, floors, strict=False) if t.cpu_us]


VARIANTS = {
    "before": "before optimisations",
    "unvalidated": "without Tenchi revalidation",
    "limited": "with the rate limiter on",
}


def _variant_cells(results: Results, op: str, c: int) -> str:
    cells = ""
    for name in VARIANTS:
        if any(key[0] == name for key in results.runs):
            throughput = _median(_ratios(results, name, "floor", op, c))
            cpu = _median(_cpu_ratios(results, name, op, c))
            cells += f" | {_x(throughput)} / {_x(cpu)}"
    return cells


def http_table(results: Results) -> list[str]:
    header = (
        "| scenario | c | Wenchang req/s | p50 ms | p99 ms | floor req/s | p50 ms "
        "| p99 ms | **Wenchang ÷ floor** | target | CPU us/req W / F "
        "| **CPU: floor ÷ W** |"
    )
    rule = "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|"
    for name, label in VARIANTS.items():
        if any(key[0] == name for key in results.runs):
            header += f" {label} ÷ floor (req/s / CPU) |"
            rule += "--:|"
    lines = [header + " errors W/F | RSS MB W/F |", rule + "---|---|"]
    for op in HTTP_OPS:
        for c in results.profile.concurrency:
            w = results.runs.get(("wenchang", op, c), [])
            f = results.runs.get(("floor", op, c), [])
            if not w or not f:
                continue
            ws, fs = _summary(w), _summary(f)
            ratio = _median(_ratios(results, "wenchang", "floor", op, c))
            cpu = _median(_cpu_ratios(results, "wenchang", op, c))
            w_cpu = _median([r.cpu_us for r in w])
            f_cpu = _median([r.cpu_us for r in f])
            lines.append(
                f"| {op} | {c} | {ws[0]} | {ws[1]} | {ws[2]} | {fs[0]} | {fs[1]} "
                f"| {fs[2]} | **{_x(ratio)}** | {_verdict(ratio, TARGETS.get(op))} "
                f"| {_x(w_cpu, 0)} / {_x(f_cpu, 0)} | **{_x(cpu)}**"
                f"{_variant_cells(results, op, c)} "
                f"| {ws[3]}/{fs[3]} | {ws[4]:.0f}/{fs[4]:.0f} |"
            )
    for c in results.profile.concurrency:
        cached = results.runs.get(("cached", "get_memory_index", c), [])
        if cached:
            cs = _summary(cached)
            ratio = _median(_ratios(results, "cached", "floor", "get_memory_index", c))
            cpu = _median(_cpu_ratios(results, "cached", "get_memory_index", c))
            cached_cpu = _x(_median([r.cpu_us for r in cached]), 0)
            padding = " |" * sum(
                any(key[0] == name for key in results.runs) for name in VARIANTS
            )
            lines.append(
                f"| get_memory_index, memory cache | {c} | {cs[0]} | {cs[1]} | {cs[2]} "
                f"| | | | {_x(ratio)} | - | {cached_cpu} | {_x(cpu)} |{padding} "
                f"{cs[3]}/- | {cs[4]:.0f}/- |"
            )
    return lines


def mcp_table(results: Results) -> list[str]:
    if not results.mcp_available:
        return ["MCP was not available in this run."]
    lines = [
        "| tool | c | MCP req/s | p50 ms | p99 ms | HTTP p50 ms | **MCP ÷ HTTP "
        "latency** | target | CPU us/call MCP / HTTP | before (SDK's Rich log "
        "handler): MCP ÷ HTTP latency | errors | RSS MB |",
        "|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|",
    ]
    for op in MCP_OPS:
        for c in results.profile.concurrency:
            m = results.runs.get(("mcp", op, c), [])
            h = results.runs.get(("wenchang", op, c), [])
            if not m or not h:
                continue
            ms, hs = _summary(m), _summary(h)
            ratio = _median(_latency_ratios(results, op, c))
            rich = _median(_latency_ratios(results, op, c, "mcp-rich"))
            verdict = _verdict(ratio, MCP_TARGET, at_most=True)
            cpu = f"{_x(_median([r.cpu_us for r in m]), 0)} / "
            cpu += _x(_median([r.cpu_us for r in h]), 0)
            lines.append(
                f"| {op} | {c} | {ms[0]} | {ms[1]} | {ms[2]} | {hs[1]} "
                f"| **{_x(ratio)}** | {verdict} | {cpu} | {_x(rich)} "
                f"| {ms[3]} | {ms[4]:.0f} |"
            )
    return lines


def _cell(run: object) -> str:
    assert isinstance(run, Run)
    errors = f", {run.errors} errors" if run.errors else ""
    return f"{_x(run.rps, 0)} req/s, p50 {_x(run.p50_ms)} ms{errors}"


def store_table(results: Results) -> list[str]:
    rows = results.store_scaling
    if not rows:
        return []
    c = max(results.profile.concurrency)
    lines = [
        f"| files in store | read_file (c={c}) | write_file (c={c}) | "
        f"get_memory_index, 500 own files (c={c}) |",
        "|--:|---|---|---|",
    ]
    for row in rows:
        cells = " | ".join(
            _cell(row[op]) for op in ("read_file", "write_file", "get_memory_index")
        )
        lines.append(f"| {row['files']:,} | {cells} |")
    first, last = rows[0], rows[-1]
    if len(rows) > 1:
        growth = " | ".join(
            f"{_x(_p50(last[op]) / _p50(first[op]))}x p50"
            for op in ("read_file", "write_file", "get_memory_index")
        )
        lines.append(f"| **{last['files']:,} ÷ {first['files']:,}** | {growth} |")
    return lines


def _p50(run: object) -> float:
    assert isinstance(run, Run)
    return run.p50_ms


def index_table(results: Results) -> list[str]:
    rows = results.index_scaling
    if not rows:
        return []
    lines = [
        "| caller's files | Wenchang p50 ms | per file us | floor p50 ms "
        "| per file us |",
        "|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        n = int(str(row["files"]))
        w, f = _p50(row["wenchang"]), _p50(row["floor"])
        per_w, per_f = _x(1000 * w / n, 0), _x(1000 * f / n, 0)
        lines.append(f"| {n} | {_x(w)} | {per_w} | {_x(f)} | {per_f} |")
    return lines


def gcs_table(results: Results) -> list[str]:
    rows = results.gcs_scaling
    if not rows:
        return []
    lines = [
        "| caller's files | no cache p50 ms | memory cache p50 ms | cache speed-up |",
        "|--:|--:|--:|--:|",
    ]
    for row in rows:
        none, memory = _p50(row["none"]), _p50(row["memory"])
        lines.append(
            f"| {row['files']} | {_x(none)} | {_x(memory)} | {_x(none / memory, 1)}x |"
        )
    return lines


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    models = [
        line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")
    ]
    cpu = models[0] if models else cpu
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = "?"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    pinned = "server on core 0, load generator on core 1" if can_pin() else "not pinned"
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {cpu} · {os.cpu_count()} cores · "
        f"Python {platform.python_version()} · SQLite {sqlite3.sqlite_version} · "
        f"commit {commit or '?'} · {pinned} · load average at the end {load}"
    )


def render(
    results: Results,
    elapsed: float,
    structural: Sequence[str] = (),
    optimisations: Sequence[str] = (),
) -> str:
    profile = results.profile
    parts = [
        f"Machine: {machine()}",
        "",
        f"Profile `{profile.name}`: {profile.rounds} alternating round(s) of "
        f"{profile.duration:g} s per run after {profile.warmup:g} s warm-up; "
        f"medians; ratios are per-round and side by side. Suite time {elapsed:.0f} s.",
        "",
        "### HTTP: Wenchang ÷ floor (throughput)",
        "",
        *http_table(results),
        "",
        "### MCP streamable HTTP ÷ HTTP (p50 latency of the same operation)",
        "",
        *mcp_table(results),
    ]
    for title, table in (
        (
            "### Per-request cost as the store grows (others' files)",
            store_table(results),
        ),
        (
            "### Index cost by the caller's own files (SQLite, c=1)",
            index_table(results),
        ),
        (
            "### Index on GCS (emulator), with and without the cache (c=1)",
            gcs_table(results),
        ),
    ):
        if table:
            parts += ["", title, "", *table]
    if optimisations:
        parts += ["", "### Our optimisations, before and after (CPU, in-process)"]
        parts += ["", *optimisations]
    if structural:
        parts += [
            "",
            "### Costs outside Wenchang's code, in isolation (CPU, in-process)",
        ]
        parts += ["", *structural]
    if results.notes:
        parts += ["", *(f"- {note}" for note in results.notes)]
    return "\n".join(parts) + "\n"
