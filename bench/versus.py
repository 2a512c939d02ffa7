"""``python -m bench.versus OTHER_TREE``: this tree's Wenchang beside another tree's.

Answers "did a change keep the speed?" without trusting two runs hours apart:
the floors' own ratios move with the machine (a cheaper fsync turns writes from
disk-bound into CPU-bound), so figures from another day are not comparable.
Both servers run like for like (``BENCH_SETTINGS``) at once, each on a database
seeded by its own tree's ``bench.seed`` (their schemas may differ), in
alternating rounds; prints medians of per-round ratios and writes nothing.
``OTHER_TREE`` is a source checkout, e.g. ``git worktree add ../old c36c26e``;
it runs under this tree's Python environment.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from bench import seed
from bench.figures import cpu_ratio, p50, ratio, rps, x
from bench.report import machine
from bench.servers import ROOT, LoadGenerator, Server, launch_server
from bench.suite import BENCH_SETTINGS, FULL, HTTP_OPS, Bench, Results, running

SEED = (
    "import sys; from pathlib import Path; from bench import seed; "
    "seed.write_database(Path(sys.argv[1]))"
)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.versus")
    parser.add_argument("other", type=Path, help="the other source tree")
    parser.add_argument("--rounds", type=int, default=FULL.rounds)
    parser.add_argument("--duration", type=float, default=FULL.duration)
    parser.add_argument("--ops", help="comma-separated scenarios (default: HTTP's)")
    return parser.parse_args(argv)


def _seeded(tree: Path, database: Path) -> Path:
    command = [sys.executable, "-c", SEED, str(database)]
    subprocess.run(command, check=True, cwd=tree, env={"PYTHONPATH": str(tree)})
    return database


def _table(results: Results, ops: Sequence[str]) -> list[str]:
    lines = [
        "| op | c | req/s this / other | **this ÷ other** | CPU: other ÷ this "
        "| p50 ms this / other | errors |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for op in ops:
        for c in results.profile.concurrency:
            errors = sum(
                run.errors
                for name in ("this", "other")
                for run in results.runs.get((name, op, c), [])
            )
            lines.append(
                f"| {op} | {c} | {x(rps(results, 'this', op, c), 0)} / "
                f"{x(rps(results, 'other', op, c), 0)} | "
                f"**{x(ratio(results, 'this', 'other', op, c))}** | "
                f"{x(cpu_ratio(results, 'this', 'other', op, c))} | "
                f"{x(p50(results, 'this', op, c))} / "
                f"{x(p50(results, 'other', op, c))} | {errors} |"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _arguments(argv)
    ops: Sequence[str] = arguments.ops.split(",") if arguments.ops else HTTP_OPS
    profile = replace(FULL, rounds=arguments.rounds, duration=arguments.duration)
    results = Results(profile)
    trees = {"this": ROOT, "other": arguments.other.resolve()}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wenchang-versus-") as scratch:
        load = LoadGenerator()
        try:
            bench = Bench(profile, Path(scratch), load)
            tokens = seed.write_tokens(bench.tokens_path)

            def starter(name: str, tree: Path) -> Callable[[], Server]:
                database = _seeded(tree, bench.workdir / f"{name}.db")
                env = {
                    **BENCH_SETTINGS,
                    "WENCHANG_STORAGE": f"sqlite:///{database}",
                    "WENCHANG_TOKENS_FILE": str(bench.tokens_path),
                }
                target = "app.server.asgi:app"
                workdir = bench.workdir
                return lambda: launch_server(
                    name, target, workdir=workdir, env=env, root=tree
                )

            starters = [starter(name, tree) for name, tree in trees.items()]
            with running(*starters) as servers:
                by_name = dict(zip(trees, servers, strict=True))
                for number in range(profile.rounds):
                    for op in ops:
                        for c in profile.concurrency:
                            order = ["this", "other"][:: 1 if number % 2 else -1]
                            for name in order:
                                run = bench.measure(by_name[name], op, c, tokens)
                                results.runs.setdefault((name, op, c), []).append(run)
                    print(f"round {number + 1} done", file=sys.stderr, flush=True)
        finally:
            load.close()
    elapsed = time.monotonic() - started
    print(f"Run: {machine()}\n")
    print(
        f"Mode: `python -m bench.versus {arguments.other} --rounds {profile.rounds} "
        f"--duration {profile.duration}`: other = that tree; alternating rounds "
        f"after {profile.warmup} s warm-up; medians of per-round ratios; "
        f"{elapsed / 60:.1f} min.\n"
    )
    print("\n".join(_table(results, ops)))
    errors = sum(run.errors for runs in results.runs.values() for run in runs)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
