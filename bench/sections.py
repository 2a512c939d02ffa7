"""The single-setting comparisons, search and the scaling curves, as markdown."""

from bench.figures import (
    Verdicts,
    cpu,
    cpu_ratio,
    errors,
    median,
    p50,
    ratio,
    rps,
    runs,
    x,
)
from bench.suite import HISTORY_OPS, WRITE_OPS, Results, Run

HISTORY_TARGET = 0.85
AUDIT_TARGETS = {
    "read_file": 0.85,
    "get_memory_index": 0.85,
    "write_file": 0.9,
    "append_line": 0.9,
}
SEARCH_P95_MS = 30.0


def synchronous_table(results: Results) -> list[str]:
    lines = [
        "| op | c | Wenchang FULL req/s | NORMAL req/s | **FULL ÷ NORMAL** "
        "| bare floor FULL req/s | NORMAL req/s | **floor FULL ÷ NORMAL** "
        "| CPU µs/req W FULL / NORMAL |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for op in WRITE_OPS:
        for c in results.profile.concurrency:
            if not runs(results, "normal", op, c):
                continue
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'wenchang', op, c), 0)} "
                f"| {x(rps(results, 'normal', op, c), 0)} "
                f"| **{x(ratio(results, 'wenchang', 'normal', op, c))}** "
                f"| {x(rps(results, 'floor', op, c), 0)} "
                f"| {x(rps(results, 'floor-normal', op, c), 0)} "
                f"| **{x(ratio(results, 'floor', 'floor-normal', op, c))}** "
                f"| {x(cpu(results, 'wenchang', op, c), 0)} / "
                f"{x(cpu(results, 'normal', op, c), 0)} |"
            )
    return lines


def _on_off(
    results: Results,
    verdicts: Verdicts,
    off: str,
    targets: dict[str, float],
    label: str,
) -> list[str]:
    lines = [
        f"| op | c | {label} on req/s | off req/s | **on ÷ off** | target "
        "| CPU: off ÷ on | CPU µs/req on / off | errors on/off |",
        "|---|--:|--:|--:|--:|---|--:|--:|---|",
    ]
    for op, target in targets.items():
        for c in results.profile.concurrency:
            if not runs(results, off, op, c):
                continue
            value = ratio(results, "wenchang", off, op, c)
            what = f"{label} on ÷ off, {op} c={c}"
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'wenchang', op, c), 0)} "
                f"| {x(rps(results, off, op, c), 0)} | **{x(value)}** "
                f"| {verdicts.check(what, value, target)} "
                f"| {x(cpu_ratio(results, 'wenchang', off, op, c))} "
                f"| {x(cpu(results, 'wenchang', op, c), 0)} / "
                f"{x(cpu(results, off, op, c), 0)} "
                f"| {errors(results, 'wenchang', op, c)}/"
                f"{errors(results, off, op, c)} |"
            )
    return lines


def history_reads(results: Results) -> list[str]:
    lines = [
        "| op | c | req/s | p50 ms | p99 ms | CPU µs/req | errors |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for op in HISTORY_OPS:
        for c in results.profile.concurrency:
            measured = runs(results, "wenchang", op, c)
            if not measured:
                continue
            p99 = median([r.p99_ms for r in measured])
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'wenchang', op, c), 0)} "
                f"| {x(p50(results, 'wenchang', op, c))} | {x(p99)} "
                f"| {x(cpu(results, 'wenchang', op, c), 0)} "
                f"| {errors(results, 'wenchang', op, c)} |"
            )
    return lines


def search_table(results: Results, verdicts: Verdicts) -> list[str]:
    if not results.search:
        return []
    lines = [
        "| backend | files in the caller's reach | req/s (c=1) | p50 ms | p95 ms "
        "| p99 ms | target | errors |",
        "|---|--:|--:|--:|--:|--:|---|--:|",
    ]
    for backend, files, run in results.search:
        cell = "-"
        if backend.startswith("SQLite"):
            what = f"search p95 ms, {backend}, {files:,} files"
            cell = verdicts.check(what, run.p95_ms, SEARCH_P95_MS, at_most=True)
        lines.append(
            f"| {backend} | {files:,} | {x(run.rps, 0)} | {x(run.p50_ms)} "
            f"| {x(run.p95_ms)} | {x(run.p99_ms)} | {cell} | {run.errors} |"
        )
    return lines


def _cell(run: object) -> str:
    assert isinstance(run, Run)
    failed = f", {run.errors} errors" if run.errors else ""
    return f"{x(run.rps, 0)} req/s, p50 {x(run.p50_ms)} ms{failed}"


def _p50(run: object) -> float:
    assert isinstance(run, Run)
    return run.p50_ms


def store_table(results: Results) -> list[str]:
    rows = results.store_scaling
    if not rows:
        return []
    c = max(results.profile.concurrency)
    ops = ("read_file", "write_file", "get_memory_index")
    lines = [
        f"| files in store | read_file (c={c}) | write_file (c={c}) | "
        f"get_memory_index, 500 own files (c={c}) |",
        "|--:|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['files']:,} | {' | '.join(_cell(row[op]) for op in ops)} |"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = " | ".join(f"{x(_p50(last[op]) / _p50(first[op]))}x p50" for op in ops)
        lines.append(f"| **{last['files']:,} ÷ {first['files']:,}** | {growth} |")
    return lines


def index_table(results: Results) -> list[str]:
    if not results.index_scaling:
        return []
    lines = [
        "| caller's files | Wenchang p50 ms | per file µs | bare floor p50 ms "
        "| per file µs |",
        "|--:|--:|--:|--:|--:|",
    ]
    for row in results.index_scaling:
        n = int(str(row["files"]))
        w, f = _p50(row["wenchang"]), _p50(row["floor"])
        lines.append(
            f"| {n} | {x(w)} | {x(1000 * w / n, 0)} | {x(f)} | {x(1000 * f / n, 0)} |"
        )
    return lines


def gcs_table(results: Results) -> list[str]:
    if not results.gcs_scaling:
        return []
    lines = [
        "| caller's files | no cache p50 ms | memory cache p50 ms | cache speed-up |",
        "|--:|--:|--:|--:|",
    ]
    for row in results.gcs_scaling:
        none, memory = _p50(row["none"]), _p50(row["memory"])
        lines.append(
            f"| {row['files']} | {x(none)} | {x(memory)} | {x(none / memory, 1)}x |"
        )
    return lines


def render(results: Results, verdicts: Verdicts) -> list[str]:
    parts: list[str] = []
    history_targets: dict[str, float] = {
        op: HISTORY_TARGET for op in (*WRITE_OPS, "replace_fact")
    }
    for title, table in (
        (
            "### Durability: `synchronous=FULL` (the default) against `NORMAL`",
            synchronous_table(results),
        ),
        (
            "### Version history on against off (write cost)",
            _on_off(results, verdicts, "no-history", history_targets, "history"),
        ),
        ("### Version history reads", history_reads(results)),
        (
            "### Audit log on against off",
            _on_off(results, verdicts, "audit-off", AUDIT_TARGETS, "audit"),
        ),
        ("### Search (HTTP `GET /v1/search`, c=1)", search_table(results, verdicts)),
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
        if table and len(table) > 2:
            parts += ["", title, "", *table]
    return parts
