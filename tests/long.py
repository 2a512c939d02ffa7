"""Run every reliability test in one mode and record its figures.

    uv run python -m tests.long            # the long mode; writes docs/reliability.md
    uv run python -m tests.long --reduced  # a smaller one; also writes the page
    uv run python -m tests.long --short    # CI's mode (the tests' defaults); prints

Each mode sets the tests' own knobs (model sequences, fuzz cases, kills, load
seconds), runs them with pytest, and keeps the figure lines each test prints.
The page names the date, the commit, the mode and the command, so every figure
quoted in the docs comes from a run anyone can repeat.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PAGE = REPOSITORY / "docs" / "reliability.md"
TESTS = (
    ("tests/test_model_storage.py", "WENCHANG_MODEL_EXAMPLES"),
    ("tests/test_fuzz_http.py", "WENCHANG_FUZZ_EXAMPLES"),
    ("tests/test_crash_safety.py", "WENCHANG_CRASH_CYCLES"),
    ("tests/test_load_sustained.py", "WENCHANG_LOAD_SECONDS"),
)
MODES: dict[str, dict[str, str]] = {
    "long": {
        "WENCHANG_MODEL_EXAMPLES": "200",
        "WENCHANG_FUZZ_EXAMPLES": "500",
        "WENCHANG_CRASH_CYCLES": "20",
        "WENCHANG_LOAD_SECONDS": "300",
    },
    "reduced": {
        "WENCHANG_MODEL_EXAMPLES": "60",
        "WENCHANG_FUZZ_EXAMPLES": "60",
        "WENCHANG_CRASH_CYCLES": "4",
        "WENCHANG_LOAD_SECONDS": "60",
    },
    # The tests' own defaults: what the plain `pytest` run in CI uses.
    "short": {
        "WENCHANG_MODEL_EXAMPLES": "40",
        "WENCHANG_FUZZ_EXAMPLES": "25",
        "WENCHANG_CRASH_CYCLES": "2",
        "WENCHANG_LOAD_SECONDS": "20",
    },
}
KEPT_SECTION = "## Mutation testing"
"""The page's part written by hand (mutmut's score), kept across runs."""
FIGURE = re.compile(r"^(model|fuzz|crash|load)\b.*", re.MULTILINE)


def _commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or "unknown"


def run_one(test: str, knobs: dict[str, str]) -> tuple[bool, float, list[str]]:
    """Run one test file in the mode; (passed, seconds, figure lines)."""
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", test],
        cwd=REPOSITORY,
        env=os.environ | knobs,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - started
    sys.stdout.write(completed.stdout[-4000:])
    figures = [m.group(0).strip() for m in FIGURE.finditer(completed.stdout)]
    return completed.returncode == 0, elapsed, figures


def page(mode: str, results: list[tuple[str, str, bool, float, list[str]]]) -> str:
    knobs = MODES[mode]
    settings = " ".join(f"{name}={value}" for name, value in knobs.items())
    lines = [
        "# Reliability runs",
        "",
        "Written by `uv run python -m tests.long"
        + ("" if mode == "long" else f" --{mode}")
        + "`; every figure about the model, fuzz, crash and load tests in these docs",
        "comes from this page.",
        "",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- commit: `{_commit()}`",
        f"- mode: {mode} (`{settings}`)",
        f"- machine: {os.cpu_count()} cores, shared with other work while it ran",
        "",
        "| test | knob | result | seconds |",
        "|---|---|---|---|",
    ]
    for test, knob, passed, elapsed, _ in results:
        verdict = "passed" if passed else "FAILED"
        lines.append(
            f"| `{test}` | `{knob}={knobs[knob]}` | {verdict} | {elapsed:.0f} |"
        )
    lines += ["", *what_ci_runs()]
    lines += ["", "Figures each test printed:", "", "```text"]
    for _, _, _, _, figures in results:
        lines += figures
    lines += ["```", ""]
    return "\n".join(lines) + _kept()


def what_ci_runs() -> list[str]:
    """What `.ci/run`'s plain pytest step runs of these tests: the short mode."""
    from tests.test_model_storage import planned

    short = MODES["short"]
    return [
        "CI (`.ci/run`'s `tests` step, `pytest -q -n 3 --dist loadfile` with the "
        "tests' defaults, as `--short`; its later steps rerun only the HTTP and "
        "MCP suites, so these run once, each on the adapters it names) runs: "
        f"model {planned(int(short['WENCHANG_MODEL_EXAMPLES']))} (each sequence "
        "opens with a concurrent pair, and later steps are pairs by chance; "
        "the run prints its count); "
        f"fuzz {short['WENCHANG_FUZZ_EXAMPLES']} cases per operation and mode; "
        f"crash {short['WENCHANG_CRASH_CYCLES']} kills per backend (sqlite, file); "
        f"load {short['WENCHANG_LOAD_SECONDS']} s.",
    ]


def _kept() -> str:
    """The page's hand-written section, from its heading on ("" without one)."""
    text = PAGE.read_text() if PAGE.exists() else ""
    at = text.find(KEPT_SECTION)
    return "" if at < 0 else "\n" + text[at:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.long")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--short", action="store_true", help="CI's mode; no page")
    group.add_argument(
        "--reduced", action="store_true", help="between CI's and the long mode"
    )
    arguments = parser.parse_args(argv)
    mode = "short" if arguments.short else "reduced" if arguments.reduced else "long"
    results = [(test, knob, *run_one(test, MODES[mode])) for test, knob in TESTS]
    if mode != "short":
        PAGE.write_text(page(mode, results))
        print(f"wrote {PAGE.relative_to(REPOSITORY)}")
    return 0 if all(passed for _, _, passed, _, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
