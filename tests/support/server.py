"""Run ``wenchang serve`` as a real process on loopback, always bounded and stopped.

A server writes its output to files (never pipes, which block a chatty process
once full), so a test can read everything the server printed at any time.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import httpx

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants

LOOPBACK = "127.0.0.1"
# Generous: a loaded 2-core CI machine can take over 20 s to import and start the app
# (a bad-setting `serve` timed out at 20 s under a load average of 13).
HEALTH_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 10.0
COMMAND_TIMEOUT_SECONDS = 60.0

_starts = count(1)


def wenchang_executable() -> str:
    """The console script of the environment running the tests."""
    return str(Path(sys.executable).parent / "wenchang")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


CARRIED = frozenset({"WENCHANG_FAST_PATHS"})
"""Settings a test run chooses for every server it starts (``.ci/run`` runs the
surface suites with ``WENCHANG_FAST_PATHS=off`` too)."""


def clean_env(settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any WENCHANG_* variable but those
    of ``CARRIED``, plus settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("WENCHANG_") or k in CARRIED
    }
    env.update(settings or {})
    return env


def run_wenchang(
    *arguments: str, cwd: Path, settings: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one ``wenchang`` command to completion (killed after a bound)."""
    return subprocess.run(
        [wenchang_executable(), *arguments],
        cwd=cwd,
        env=clean_env(settings),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_SECONDS,
        check=False,
    )


def _is_healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1.0).status_code == 200
    except httpx.TransportError:
        return False


@dataclass(frozen=True, slots=True)
class ServerProcess:
    process: subprocess.Popen[bytes]
    url: str
    stdout_path: Path
    stderr_path: Path

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_until_healthy(self, timeout: float = HEALTH_TIMEOUT_SECONDS) -> None:
        """Poll ``/health`` until it answers 200; fail if the process exits first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"wenchang serve exited early\n{self.describe()}")
            if _is_healthy(self.url):
                return
            time.sleep(0.05)
        raise RuntimeError(
            f"wenchang serve not healthy in {timeout}s\n{self.describe()}"
        )

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after a bound; returns the exit code. Idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        return self.process.returncode

    def describe(self) -> str:
        return f"--- stdout\n{self.stdout()}--- stderr\n{self.stderr()}"


def start_server(
    cwd: Path,
    *,
    logs: Path,
    settings: Mapping[str, str] | None = None,
    arguments: Sequence[str] = (),
) -> ServerProcess:
    """Start ``wenchang serve`` on a free loopback port; it is not yet healthy."""
    port = free_port()
    logs.mkdir(parents=True, exist_ok=True)
    stem = logs / f"wenchang-{next(_starts)}-{port}"
    stdout_path, stderr_path = stem.with_suffix(".out"), stem.with_suffix(".err")
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [
                wenchang_executable(),
                *("serve", "--host", LOOPBACK, "--port", str(port), *arguments),
            ],
            cwd=cwd,
            env=clean_env(settings),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    return ServerProcess(process, f"http://{LOOPBACK}:{port}", stdout_path, stderr_path)


@contextmanager
def running_server(
    cwd: Path, *, logs: Path, settings: Mapping[str, str] | None = None
) -> Generator[ServerProcess]:
    """A healthy server for the block; stopped on exit, even on failure."""
    server = start_server(cwd, logs=logs, settings=settings)
    try:
        server.wait_until_healthy()
        yield server
    finally:
        server.stop()


def alice_on_sqlite(
    directory: Path, database: str = "wenchang.db", **extra: str
) -> tuple[str, dict[str, str]]:
    """A token owning ``user=alice`` and the settings of a server on
    ``directory/database`` that honours it (plus ``extra`` settings)."""
    tokens = directory / "tokens.json"
    token, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{directory / database}",
        "WENCHANG_TOKENS_FILE": str(tokens),
        **extra,
    }
    return token, settings


@contextmanager
def running_servers(
    count: int, cwd: Path, *, settings: Mapping[str, str]
) -> Generator[tuple[ServerProcess, ...]]:
    """``count`` servers started together (on one database, say), all healthy;
    every one stopped on exit."""
    with ExitStack() as stack:
        servers = tuple(
            start_server(cwd, logs=cwd / "logs", settings=settings)
            for _ in range(count)
        )
        for server in servers:
            stack.callback(server.stop)
        for server in servers:
            server.wait_until_healthy()
        yield servers
