"""Long operator tasks on a terminal and under Ctrl-C: ``tenchi task run`` in a
real process, its stderr a pseudo-terminal or its run interrupted by SIGINT."""

import asyncio
import json
import os
import pty
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.support.server import clean_env

ENTITY = {"scope": "user", "entity_id": "alice"}
REPOSITORY = Path(__file__).resolve().parents[1]
MANY = 8000  # an export takes over a second: time to interrupt it under load


def command(name: str, payload: object) -> list[str]:
    tenchi = str(Path(sys.executable).parent / "tenchi")
    return [tenchi, "task", "run", name, "--input", json.dumps(payload), "--json"]


def environment(root: Path) -> dict[str, str]:
    return clean_env(
        {
            "WENCHANG_STORAGE": f"sqlite:///{root / 'w.db'}",
            "WENCHANG_TOKENS_FILE": str(root / "tokens.json"),
            "TERM": "xterm-256color",
            "COLUMNS": "120",
        }
    )


def on_a_terminal(root: Path, name: str, payload: object) -> tuple[bytes, bytes]:
    """Run the task with stderr a pseudo-terminal: (what it showed, stdout)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        command(name, payload),
        cwd=REPOSITORY,
        env=environment(root),
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal's other end closed: the task exited
            break
        if not chunk:
            break
        shown += chunk
    stdout, _ = process.communicate(timeout=120)
    os.close(controller)
    assert process.returncode == 0, shown
    return shown, stdout


async def seed(root: Path, count: int) -> None:
    settings = Settings(
        storage=f"sqlite:///{root / 'w.db'}", tokens_file=str(root / "tokens.json")
    )
    files = [
        {"area": "notes", "name": f"n-{i:05d} ☕", "content": f"- [stated] {i}\n"}
        for i in range(count)
    ]
    await build_task_runner(settings).run(
        "memory.import", input={**ENTITY, "files": files}
    )


def run_task(root: Path, name: str, payload: object) -> dict[str, Any]:
    completed = subprocess.run(
        command(name, payload),
        cwd=REPOSITORY,
        env=environment(root),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)["output"]


def tree_of(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def interruptible() -> None:
    """In the child before exec: SIGINT back to its default, as a shell gives a
    foreground command. A child inherits an ignored SIGINT, and then Python
    never raises KeyboardInterrupt; a pytest worker can hold SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(
    root: Path, name: str, payload: object, started: Callable[[], bool]
) -> int:
    """Run the task until ``started`` says it is under way, then send SIGINT;
    its exit status."""
    process = subprocess.Popen(
        command(name, payload),
        cwd=REPOSITORY,
        env=environment(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=interruptible,
    )
    while not started() and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=120)
    return process.returncode


def stored_files(root: Path) -> int:
    with sqlite3.connect(root / "w.db") as database:
        (count,) = database.execute("SELECT count(*) FROM memory_objects").fetchone()
    return count


def test_progress_shows_on_a_terminal_and_stdout_stays_the_result(
    tmp_path: Path,
) -> None:
    """stderr a pseudo-terminal: a bar with counts; stdout: the JSON result."""
    asyncio.run(seed(tmp_path, 3))
    payload = {**ENTITY, "path": str(tmp_path / "tree")}
    shown, stdout = on_a_terminal(tmp_path, "memory.export_markdown", payload)

    assert b"export_markdown" in shown and b"3/3" in shown
    assert json.loads(stdout)["output"]["written"] == 3


def test_without_a_terminal_stderr_shows_no_bar(tmp_path: Path) -> None:
    asyncio.run(seed(tmp_path, 3))
    completed = subprocess.run(
        command("memory.purge", {**ENTITY, "dry_run": True}),
        cwd=REPOSITORY,
        env=environment(tmp_path),
        capture_output=True,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 0
    assert b"purge" not in completed.stderr
    assert json.loads(completed.stdout)["output"]["objects"] == 3


def test_ctrl_c_leaves_whole_files_and_a_re_run_continues(tmp_path: Path) -> None:
    """SIGINT mid-export: no partial file, every file written is whole; the
    re-run writes the rest. The same mid-import: each file stored whole, and a
    re-run stores the rest; the tree then exports again to the same bytes."""
    asyncio.run(seed(tmp_path, MANY))
    tree = tmp_path / "tree"
    export = {**ENTITY, "path": str(tree)}
    area = tree / "user" / "notes"

    status = interrupted(
        tmp_path,
        "memory.export_markdown",
        export,
        # Its first staged file: a finished export cannot be interrupted, and
        # this machine may write all of the files in half a second.
        lambda: area.is_dir() and any(area.iterdir()),
    )

    assert status != 0
    written = tree_of(tree)
    assert not [name for name in written if not name.endswith(".md")]
    assert 0 < len(written) < MANY
    report = run_task(tmp_path, "memory.export_markdown", export)
    assert (report["unchanged"], report["written"]) == (
        len(written),
        MANY - len(written),
    )
    complete = tree_of(tree)
    assert {name: complete[name] for name in written} == written

    run_task(tmp_path, "memory.purge", {**ENTITY, "dry_run": False})
    status = interrupted(
        tmp_path,
        "memory.import_markdown",
        {**ENTITY, "path": str(tree)},
        lambda: stored_files(tmp_path) > 0,
    )

    assert status != 0
    kept = stored_files(tmp_path)
    assert 0 < kept < MANY
    report = run_task(tmp_path, "memory.import_markdown", {**ENTITY, "path": str(tree)})
    assert (report["unchanged"], report["created"]) == (kept, MANY - kept)
    run_task(
        tmp_path, "memory.export_markdown", {**ENTITY, "path": str(tmp_path / "again")}
    )
    assert tree_of(tmp_path / "again") == complete
