"""``python -m bench.instructions [OTHER_TREE]``: CPU instructions per request.

Wall-clock ratios move by 10-40 % between runs on a shared machine; instruction
counts do not. This runs the whole ASGI app of a source tree in one process
(its lifespan, then requests handed to it as ASGI calls: no sockets, no
uvicorn) under ``valgrind --tool=callgrind`` on the bench dataset
(``bench.seed``) with the like-for-like settings (``BENCH_SETTINGS``), and
counts the instructions of ``--count`` requests after ``--warmup`` ones
(``callgrind_control -z`` then ``-d``). With ``OTHER_TREE`` (a source checkout,
e.g. ``git worktree add ../old c36c26e``) both trees run with one driver and
this tree's Python environment.

Reads pick one of the reader's 500 files at random (seeded); appends go
round-robin to a0..a63 with the current version as ``If-Match``. The timers are
taken out, because under valgrind (~50x slower) they fire per wall-clock second
and so spread their work over ever fewer requests: the audit buffer writes by
count only (256 events, as under load), the search drain does not run (a
search indexes what is pending itself), and the webhook worker's round and the
token file's re-read run once, at start-up. The driver's own work is in every
figure: the counts compare trees with each other, not with other benchmarks.
``--sql`` also counts the SQL statements per request (``sqlite3`` trace
callbacks, a separate run without valgrind); ``--sql-only`` counts nothing else.
``--bytecodes`` counts, instead, the Python bytecode instructions run per
request in each function (``sys.monitoring``, no valgrind: seconds, not
minutes), and with another tree lists the functions whose counts moved most;
it sees no C work (SQLite, pydantic's core), so it says where a tree's extra
Python steps are, and callgrind how much they cost.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS = ("read", "append")


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions")
    parser.add_argument("other", type=Path, nargs="?", help="another source tree")
    parser.add_argument("--ops", default=",".join(OPS), help="read,append")
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--sql", action="store_true", help="count SQL per request")
    parser.add_argument(
        "--sql-only", action="store_true", help="count SQL only (no valgrind)"
    )
    parser.add_argument(
        "--bytecodes",
        action="store_true",
        help="count Python bytecodes per request by function (no valgrind)",
    )
    return parser.parse_args(argv)


def _driver(tree: Path, op: str, warmup: int, count: int, *extra: str) -> list[str]:
    script = str(ROOT / "bench" / "instructions_driver.py")
    return [sys.executable, script, str(tree), op, str(warmup), str(count), *extra]


def _environment(tree: Path) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("WENCHANG_")}
    # One hash seed for every run: str hashes decide dict and set layouts, and
    # so how many probes a lookup takes (a few % of a request, run to run).
    return {**kept, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}


def _label(tree: Path) -> str:
    """The tree's commit (with ``+`` when it has local changes), else its name."""
    git = ["git", "-C", str(tree)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True)
    if head.returncode != 0:
        return tree.name
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD"]).returncode != 0
    return head.stdout.decode().strip() + ("+" if dirty else "")


def instructions(tree: Path, op: str, warmup: int, count: int) -> int:
    """Instructions per request of ``op`` in ``tree`` (all threads, callgrind)."""
    with tempfile.TemporaryDirectory(prefix="instructions-") as work:
        out = Path(work) / "cg"
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}.%p",
            *_driver(tree, op, warmup, count, "--callgrind"),
        ]
        subprocess.run(
            command,
            check=True,
            cwd=work,
            env=_environment(tree),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for dump in Path(work).glob("cg.*"):
            text = dump.read_text(errors="replace")
            if re.search(r"^desc: Trigger: .*dump", text, re.M):
                totals = re.search(r"^totals: (\d+)", text, re.M)
                assert totals is not None, dump
                return int(totals.group(1)) // count
    raise RuntimeError(f"no callgrind dump for {op} in {tree}")


def statements(tree: Path, op: str, warmup: int, count: int) -> str:
    """The SQL statements per request of ``op`` in ``tree``, most frequent first."""
    with tempfile.TemporaryDirectory(prefix="instructions-") as work:
        done = subprocess.run(
            _driver(tree, op, warmup, count, "--sql"),
            check=True,
            cwd=work,
            env=_environment(tree),
            capture_output=True,
            text=True,
        )
        return done.stdout


def bytecodes(tree: Path, op: str, warmup: int, count: int) -> dict[str, float]:
    """Bytecode instructions per request of ``op`` in ``tree``, by function."""
    with tempfile.TemporaryDirectory(prefix="instructions-") as work:
        out = Path(work) / "bytecodes.json"
        subprocess.run(
            _driver(tree, op, warmup, count, "--bytecodes", str(out)),
            check=True,
            cwd=work,
            env=_environment(tree),
            stdout=subprocess.DEVNULL,
        )
        counted: dict[str, float] = json.loads(out.read_text())
        return counted


def _print_bytecodes(
    arguments: argparse.Namespace, trees: list[tuple[str, Path]], ops: list[str]
) -> None:
    for op in ops:
        counted = {
            name: bytecodes(tree, op, arguments.warmup, arguments.count)
            for name, tree in trees
        }
        totals = ", ".join(f"{n} {sum(c.values()):,.0f}" for n, c in counted.items())
        print(f"\nPython bytecodes per {op}: {totals}")
        if len(trees) < 2:
            continue
        this, other = _by_file_name(counted["this"]), _by_file_name(counted["other"])
        moved = {f: this.get(f, 0) - other.get(f, 0) for f in {*this, *other}}
        print("| function | this | other | this - other |\n|---|--:|--:|--:|")
        for function in sorted(moved, key=lambda f: -abs(moved[f]))[:BYTECODE_ROWS]:
            print(
                f"| `{function}` | {this.get(function, 0):.0f} "
                f"| {other.get(function, 0):.0f} | {moved[function]:+.0f} |"
            )


def _by_file_name(counted: dict[str, float]) -> dict[str, float]:
    """Counts keyed ``file.py:qualname``: a module moved to a folder still matches."""
    named: dict[str, float] = {}
    for function, times in counted.items():
        path, _, qualname = function.partition(":")
        key = f"{Path(path).name}:{qualname}"
        named[key] = named.get(key, 0) + times
    return named


BYTECODE_ROWS = 30
"""Functions listed by ``--bytecodes``: those whose counts moved most."""


def main(argv: Sequence[str] | None = None) -> None:
    arguments = _arguments(argv)
    trees = [("this", ROOT)]
    if arguments.other is not None:
        trees.append(("other", arguments.other.resolve()))
    ops = arguments.ops.split(",")
    if arguments.bytecodes:
        _print_bytecodes(arguments, trees, ops)
        return
    if not arguments.sql_only:
        _print_instructions(arguments, trees, ops)
    if arguments.sql or arguments.sql_only:
        for op in ops:
            for name, tree in trees:
                print(f"\nSQL per {op}, {name}:")
                print(statements(tree, op, arguments.warmup, 200), end="")


def _print_instructions(
    arguments: argparse.Namespace, trees: list[tuple[str, Path]], ops: list[str]
) -> None:
    rows: dict[tuple[str, str], int] = {}
    for op in ops:
        for name, tree in trees:
            rows[name, op] = instructions(tree, op, arguments.warmup, arguments.count)
    header = "| op | " + " | ".join(f"{name} ({_label(tree)})" for name, tree in trees)
    print(header + (" | this ÷ other |" if len(trees) > 1 else " |"))
    print("|---|" + "--:|" * (len(trees) + (len(trees) > 1)))
    for op in ops:
        cells = [f"{rows[name, op] / 1000:,.0f}k" for name, _ in trees]
        if len(trees) > 1:
            cells.append(f"{rows['this', op] / rows['other', op]:.3f}")
        print(f"| {op} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
