"""``python -m bench.write_rows``: the write rows alone, against the Tenchi floor.

write_file, append_line, replace_fact and mixed (or the scenarios ``--ops``
names, e.g. read_file) at c=1 and c=16, Wenchang like for like beside the
Tenchi floor (and, with ``--baseline DIR``, beside Wenchang served from another
source tree, e.g. ``git worktree add /tmp/before <commit>``),
in alternating rounds on copies of one dataset, as the full suite runs them.
Prints medians of per-round ratios; writes nothing. For development: the
figures of record come from ``python -m bench``.
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from bench.figures import cpu, ratio, rps, x
from bench.report import machine
from bench.servers import LoadGenerator, Server, launch_server
from bench.suite import (
    BENCH_SETTINGS,
    FULL,
    Bench,
    Results,
    running,
    sqlite_url,
)

OPS = ("write_file", "append_line", "replace_fact", "mixed")


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.write_rows")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=FULL.duration)
    parser.add_argument("--baseline", type=Path, help="another Wenchang source tree")
    parser.add_argument("--normal", action="store_true", help="also synchronous=normal")
    parser.add_argument(
        "--ops",
        default=",".join(OPS),
        help="comma-separated scenarios (e.g. read_file)",
    )
    return parser.parse_args(argv)


def _starters(
    bench: Bench, database: Path, arguments: argparse.Namespace
) -> dict[str, Callable[[], Server]]:
    def wenchang(name: str, **settings: str) -> Callable[[], Server]:
        env = {
            **BENCH_SETTINGS,
            "WENCHANG_STORAGE": sqlite_url(bench.copy(database, name)),
            "WENCHANG_TOKENS_FILE": str(bench.tokens_path),
            **settings,
        }
        target = "app.server.asgi:app"
        return lambda: launch_server(name, target, workdir=bench.workdir, env=env)

    starters = {
        "wenchang": wenchang("wenchang"),
        "tenchi": lambda: bench.floor(
            "tenchi", bench.copy(database, "tenchi"), "bench.tenchi_floor:app"
        ),
    }
    if arguments.baseline is not None:
        tree = str(arguments.baseline.resolve())
        starters["baseline"] = wenchang("baseline", PYTHONPATH=tree)
    if arguments.normal:
        starters["normal"] = wenchang("normal", WENCHANG_SQLITE_SYNCHRONOUS="normal")
    return starters


def _table(results: Results, names: Sequence[str], ops: Sequence[str]) -> list[str]:
    others = [n for n in names if n != "tenchi"]
    head = " | ".join(f"{n} ÷ tenchi" for n in others)
    lines = [
        f"| op | c | {' / '.join(names)} req/s | {head} | CPU µs/req "
        f"{' / '.join(names)} |",
        "|---|--:|--:|" + "--:|" * len(others) + "--:|",
    ]
    for op in ops:
        for c in results.profile.concurrency:
            throughput = " / ".join(x(rps(results, n, op, c), 0) for n in names)
            ratios = " | ".join(
                f"**{x(ratio(results, n, 'tenchi', op, c))}**" for n in others
            )
            costs = " / ".join(x(cpu(results, n, op, c), 0) for n in names)
            lines.append(f"| {op} | {c} | {throughput} | {ratios} | {costs} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    ops = arguments.ops.split(",")
    profile = replace(FULL, rounds=arguments.rounds, duration=arguments.duration)
    results = Results(profile)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wenchang-writes-") as scratch:
        load = LoadGenerator()
        try:
            bench = Bench(profile, Path(scratch), load)
            database, tokens = bench.dataset("main")
            starters = _starters(bench, database, arguments)
            names = list(starters)
            with running(*starters.values()) as servers:
                by_name = dict(zip(names, servers, strict=True))
                for number in range(profile.rounds):
                    for op in ops:
                        for c in profile.concurrency:
                            turn = number % len(names)
                            for name in names[turn:] + names[:turn]:
                                run = bench.measure(by_name[name], op, c, tokens)
                                results.runs.setdefault((name, op, c), []).append(run)
                    print(f"round {number + 1} done", file=sys.stderr, flush=True)
        finally:
            load.close()
    elapsed = time.monotonic() - started
    print(f"Run: {machine()}\n")
    print(
        f"Mode: `python -m bench.write_rows --ops {','.join(ops)} --rounds "
        f"{profile.rounds} --duration {profile.duration}`: alternating rounds "
        f"after {profile.warmup} s warm-up; "
        f"medians of per-round ratios; {elapsed / 60:.1f} min.\n"
    )
    print("\n".join(_table(results, names, ops)))
    errors = sum(run.errors for runs in results.runs.values() for run in runs)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
