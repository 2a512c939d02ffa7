"""``python -m bench.audit``: throughput with the audit log on against off.

Two Wenchang servers on copies of one database, identical but for
``WENCHANG_AUDIT`` (the default, events in the same SQLite database, against
``none``), answer the same scenario back to back; the order rotates between
rounds and the report takes the median of the per-round ratios. Reads must
keep at least 0.85 of their throughput, writes 0.9.
"""

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench.servers import LoadGenerator
from bench.suite import FULL, Bench, Run, running, sqlite_url

SCENARIOS = (
    ("read_file", 0.85),
    ("get_memory_index", 0.85),
    ("write_file", 0.9),
    ("append_line", 0.9),
)
SERVERS = {"audit on": {}, "audit off": {"WENCHANG_AUDIT": "none"}}


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.audit", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=FULL.duration)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    return parser.parse_args(argv)


def _row(op: str, concurrency: int, floor: float, runs: dict[str, list[Run]]) -> str:
    on, off = runs["audit on"], runs["audit off"]
    pairs = zip(on, off, strict=True)
    ratio = statistics.median(a.rps / b.rps if b.rps else 0.0 for a, b in pairs)
    verdict = "met" if ratio >= floor else "MISSED"
    rps_on = statistics.median(run.rps for run in on)
    rps_off = statistics.median(run.rps for run in off)
    cpu = statistics.median(b.cpu_us / a.cpu_us for a, b in zip(on, off, strict=True))
    errors = sum(run.errors for run in on + off)
    return (
        f"| {op} | {concurrency} | {rps_on:.0f} | {rps_off:.0f} | {ratio:.2f} "
        f"| {cpu:.2f} | >= {floor} {verdict} | {errors} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    profile = replace(FULL, duration=arguments.duration)
    lines = [
        f"Audit A/B, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {arguments.rounds} "
        f"rounds of {arguments.duration} s, medians of per-round ratios.",
        "",
        "| op | c | req/s on | req/s off | throughput on ÷ off | CPU/req off ÷ on "
        "| target | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="wenchang-audit-bench-") as scratch:
        load = LoadGenerator()
        try:
            bench = Bench(profile, Path(scratch), load)
            database, tokens = bench.dataset("main")
            starters = [
                (
                    lambda n=name, s=settings: bench.wenchang(
                        n, sqlite_url(bench.copy(database, n.replace(" ", "-"))), **s
                    )
                )
                for name, settings in SERVERS.items()
            ]
            with running(*starters) as started:
                servers = dict(zip(SERVERS, started, strict=True))
                for op, floor in SCENARIOS:
                    for concurrency in arguments.concurrency:
                        runs: dict[str, list[Run]] = {name: [] for name in servers}
                        for round_number in range(arguments.rounds):
                            order = list(servers)
                            if round_number % 2:
                                order.reverse()
                            for name in order:
                                run = bench.measure(
                                    servers[name], op, concurrency, tokens
                                )
                                runs[name].append(run)
                        lines.append(_row(op, concurrency, floor, runs))
                        print(lines[-1], file=sys.stderr, flush=True)
        finally:
            load.close()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
