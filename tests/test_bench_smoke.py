"""The benchmark harness still runs end to end (smoke mode; no timing is asserted)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOKE_TIMEOUT_SECONDS = 600


def run_module(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (a ``python -m`` line) from the repository, its output kept."""
    return subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SMOKE_TIMEOUT_SECONDS,
        check=False,
    )


def test_bench_smoke_prints_the_ratio_table_without_errors(tmp_path: Path) -> None:
    """`python -m bench --smoke` exits 0 (no request failed) and writes the tables."""
    output = tmp_path / "RESULTS.md"

    finished = run_module(
        [sys.executable, "-m", "bench", "--smoke", "--output", str(output)]
    )

    assert finished.returncode == 0, finished.stdout + finished.stderr
    table = output.read_text()
    assert "did not start" not in table  # a floor behind the contracts drops its rows
    assert "Wenchang ÷ Tenchi floor" in table
    assert "Tenchi floor ÷ bare" in table
    for scenario in (
        "read_file",
        "write_file",
        "append_line",
        "replace_fact",
        "get_memory_index",
    ):
        assert f"| {scenario} | 4 |" in table
    assert "| mixed | 1 |" in table
    assert "default ÷ RATE_LIMIT=0" in table
    assert "304 ÷ full" in table
    assert "Costs outside Wenchang's code" in table


def test_bench_versus_runs_two_trees_side_by_side() -> None:
    """`python -m bench.versus <tree>` serves both trees and prints their ratios.

    Against this very tree (a clean clone has no other checkout); each side
    seeds its own database with its own tree's seed code.
    """
    command = [sys.executable, "-m", "bench.versus", str(ROOT), "--rounds", "1"]
    command += ["--duration", "0.1", "--ops", "read_file,append_line"]

    finished = run_module(command)

    assert finished.returncode == 0, finished.stdout + finished.stderr
    for op in ("read_file", "append_line"):
        for c in (1, 16):
            row = next(
                line
                for line in finished.stdout.splitlines()
                if line.startswith(f"| {op} | {c} |")
            )
            assert row.endswith("| 0 |"), row  # no request failed


def test_feed_latency_runs_two_servers_and_prints_both_rows() -> None:
    """`python -m bench.feed_latency N` (bench/RESULTS.md's feed latency rows)
    measures each write to an SSE event and to a webhook; no timing is asserted."""
    finished = run_module([sys.executable, "-m", "bench.feed_latency", "3"])

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "· 3 writes · two servers, one SQLite file" in finished.stdout
    assert "| write sent → SSE event received |" in finished.stdout
    assert "| write sent → webhook received |" in finished.stdout


def test_bench_instructions_drives_reads_and_appends_and_lists_their_sql() -> None:
    """`python -m bench.instructions --sql-only`: the driver of bench/RESULTS.md's
    instructions per request serves both operations in process (valgrind's count
    itself takes minutes, so it is not run here) and lists their SQL."""
    command = [sys.executable, "-m", "bench.instructions", "--sql-only"]
    command += ["--warmup", "3"]

    finished = run_module(command)

    assert finished.returncode == 0, finished.stdout + finished.stderr
    read, append = finished.stdout.split("SQL per append, this:")
    assert "1.00 SELECT data, description" in read
    assert "COMMIT" not in read
    assert "1.00 COMMIT" in append
    assert "1.00 INSERT INTO memory_changes" in append


def test_bench_instructions_counts_python_bytecodes_by_function() -> None:
    """`python -m bench.instructions --bytecodes`: the same driver counts the
    Python steps of each request by function (sys.monitoring, no valgrind)."""
    command = [sys.executable, "-m", "bench.instructions", "--bytecodes"]
    command += ["--ops", "read", "--warmup", "3", "--count", "20"]

    finished = run_module(command)

    assert finished.returncode == 0, finished.stdout + finished.stderr
    line = next(
        text
        for text in finished.stdout.splitlines()
        if text.startswith("Python bytecodes per read: this ")
    )
    assert int(line.rsplit(" ", 1)[1].replace(",", "")) > 1000, line
