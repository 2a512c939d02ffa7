"""The programs in examples/ run against a real server (``wenchang serve`` on
SQLite), without a model: the memory tool example seeds and views memory, the
LangGraph agent remembers in one run and recalls in another."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import alice_on_sqlite, clean_env, running_server

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUN_SECONDS = 120


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    directory = tmp_path_factory.mktemp("examples")
    token, settings = alice_on_sqlite(directory)
    logs = tmp_path_factory.mktemp("examples-logs")
    with running_server(directory, logs=logs, settings=settings) as server:
        yield server.url, token


def run_example(name: str, served: tuple[str, str]) -> str:
    environment = clean_env()
    environment.pop("ANTHROPIC_API_KEY", None)
    finished = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *served],
        env=environment,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout


def test_the_memory_tool_example_keeps_claude_memory_in_wenchang(
    served: tuple[str, str],
) -> None:
    first = run_example("claude_memory_tool.py", served)
    again = run_example("claude_memory_tool.py", served)

    assert "File created successfully at: /memories/preferences/coffee.md" in first
    assert "/memories/preferences/coffee.md" in again
    assert "File created" not in again  # the memory outlived the first run
    assert "conversation is skipped" in again


def test_the_langgraph_example_recalls_what_another_run_stored(
    served: tuple[str, str],
) -> None:
    run_example("langgraph_memory.py", served)
    output = run_example("langgraph_memory.py", served)

    assert output.splitlines() == [
        "Noted: tea: green, no milk",
        "You told me: - [stated] tea: green, no milk",
    ]
