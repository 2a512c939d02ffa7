"""Medians and per-round ratios of a run's results, and their table cells."""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.suite import Results, Run


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def x(value: float, digits: int = 2) -> str:
    """A number for a table cell; a dash when nothing was measured."""
    return "-" if value != value else f"{value:,.{digits}f}"


def runs(results: Results, name: str, op: str, c: int) -> list[Run]:
    return results.runs.get((name, op, c), [])


def rps(results: Results, name: str, op: str, c: int) -> float:
    return median([r.rps for r in runs(results, name, op, c)])


def cpu(results: Results, name: str, op: str, c: int) -> float:
    return median([r.cpu_us for r in runs(results, name, op, c)])


def p50(results: Results, name: str, op: str, c: int) -> float:
    return median([r.p50_ms for r in runs(results, name, op, c)])


def ratio(
    results: Results, top: str, bottom: str, op: str, c: int, bottom_op: str = ""
) -> float:
    """Median of per-round throughput ratios top ÷ bottom (same round)."""
    tops = runs(results, top, op, c)
    bottoms = runs(results, bottom, bottom_op or op, c)
    return median([t.rps / b.rps for t, b in zip(tops, bottoms, strict=False) if b.rps])


def cpu_ratio(results: Results, top: str, bottom: str, op: str, c: int) -> float:
    """Median of per-round CPU-cost ratios bottom ÷ top: 1.0 = as cheap as bottom."""
    tops = runs(results, top, op, c)
    bottoms = runs(results, bottom, op, c)
    return median(
        [b.cpu_us / t.cpu_us for t, b in zip(tops, bottoms, strict=False) if t.cpu_us]
    )


def latency_ratio(results: Results, top: str, bottom: str, op: str, c: int) -> float:
    tops = runs(results, top, op, c)
    bottoms = runs(results, bottom, op, c)
    return median(
        [t.p50_ms / b.p50_ms for t, b in zip(tops, bottoms, strict=False) if b.p50_ms]
    )


def errors(results: Results, name: str, op: str, c: int) -> int:
    return sum(r.errors for r in runs(results, name, op, c))


@dataclass
class Verdicts:
    """Every target of the run and whether it held, for the summary table."""

    rows: list[tuple[str, str, str, bool]] = field(
        default_factory=list[tuple[str, str, str, bool]]
    )

    def check(
        self, what: str, value: float, target: float, *, at_most: bool = False
    ) -> str:
        """The cell for ``value`` against ``target``; remembered for the summary."""
        if value != value:
            return "-"
        held = value <= target if at_most else value >= target
        sign = "≤" if at_most else "≥"
        self.rows.append((what, x(value), f"{sign} {target:g}", held))
        return f"{'✅' if held else '❌'} {sign} {target:g}"

    def summary(self) -> list[str]:
        held = sum(1 for row in self.rows if row[3])
        lines = [
            f"{held} of {len(self.rows)} targets held in this run.",
            "",
            "| target | measured | wanted | |",
            "|---|--:|---|---|",
        ]
        lines += [
            f"| {what} | {value} | {wanted} | {'✅' if ok else '❌'} |"
            for what, value, wanted, ok in self.rows
        ]
        return lines
