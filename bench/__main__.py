"""``python -m bench``: the whole suite in one run, and its tables.

``--profile full`` (the default) is the run ``bench/RESULTS.md`` records (about
15-17 minutes on a quiet 2-core machine); ``--profile quick`` (a few minutes)
gives every row once for development; ``--smoke`` (``--profile smoke``) runs
every scenario for a fraction of a second so CI keeps the harness working (its
numbers mean nothing). The full profile rewrites ``bench/RESULTS.md`` between
its markers unless ``--output`` says otherwise; the others only print.
"""

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from bench import report, scaling, structural
from bench.search_rows import search_rows
from bench.servers import LoadGenerator
from bench.suite import PROFILES, Bench, Results, compare

RESULTS = Path(__file__).with_name("RESULTS.md")
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="full")
    parser.add_argument("--smoke", action="store_true", help="--profile smoke")
    parser.add_argument("--rounds", type=int, help="alternating rounds")
    parser.add_argument("--duration", type=float, help="seconds per measured run")
    parser.add_argument("--output", type=Path, help="markdown file to (re)write")
    parser.add_argument("--raw", type=Path, help="also write every run as JSON")
    parser.add_argument("--no-scaling", action="store_true", help="skip the curves")
    parser.add_argument("--no-search", action="store_true", help="skip search rows")
    return parser.parse_args(argv)


def _write(path: Path, table: str) -> None:
    block = f"{BEGIN}\n{table}{END}"
    text = (
        path.read_text()
        if path.exists()
        else f"# Benchmark results\n\n{BEGIN}\n{END}\n"
    )
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


def _raw(results: Results) -> list[dict[str, object]]:
    return [
        {"server": name, "op": op, "concurrency": c, "round": n, **asdict(run)}
        for (name, op, c), runs in results.runs.items()
        for n, run in enumerate(runs)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    profile = PROFILES["smoke" if arguments.smoke else arguments.profile]
    profile = replace(
        profile,
        rounds=arguments.rounds or profile.rounds,
        duration=arguments.duration or profile.duration,
    )
    quick = profile.name != "full"
    started = time.monotonic()
    results = Results(profile)

    def progress(step: str) -> None:
        print(
            f"[{time.monotonic() - started:5.0f} s] {step}", file=sys.stderr, flush=True
        )

    def section[T](name: str, run: Callable[[], T], otherwise: T) -> T:
        # A later section that breaks (e.g. on code it patches having moved)
        # must not throw away the comparison already measured.
        try:
            return run()
        except Exception as exc:
            results.notes.append(f"{name} failed and is missing: {exc!r}")
            progress(f"{name} FAILED: {exc!r}")
            return otherwise

    with tempfile.TemporaryDirectory(prefix="wenchang-bench-") as scratch:
        load = LoadGenerator()
        try:
            bench = Bench(profile, Path(scratch), load)
            compare(bench, results, progress)
            if not arguments.no_search:
                section("search", lambda: search_rows(bench, results, progress), None)
            if not arguments.no_scaling:
                for name, curve in (
                    ("store curve", scaling.store_growth),
                    ("index curve", scaling.index_growth),
                    ("GCS index curve", scaling.gcs_index),
                ):
                    section(name, lambda c=curve: c(bench, results, progress), None)
            costs = section(
                "isolated costs", lambda: structural.render(quick=quick), []
            )
        finally:
            load.close()
    table = report.render(results, time.monotonic() - started, costs)
    print(table)
    if arguments.raw:
        arguments.raw.write_text(json.dumps(_raw(results), indent=1))
    output = arguments.output or (None if quick else RESULTS)
    if output is not None:
        _write(output, table)
    failed = sum(run.errors for runs in results.runs.values() for run in runs)
    failed += sum(run.errors for _, _, run in results.search)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
