"""Server and load-generator processes for the benchmark, pinned to separate cores.

Servers run under uvicorn with uvloop and httptools (``uvicorn[standard]``) and
no access log, on loopback, pinned to core 0 when ``taskset`` and two cores are
available; the load generator runs as one long-lived process pinned to core 1
that takes one run description per line and answers one result per line.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
SERVER_CORE, LOAD_CORE = "0", "1"


def can_pin() -> bool:
    return shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2


def _pinned(core: str, command: list[str]) -> list[str]:
    return ["taskset", "-c", core, *command] if can_pin() else command


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


def _environment(extra: Mapping[str, str], root: Path = ROOT) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WENCHANG_")}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(root), env.get("PYTHONPATH")])
    )
    env.update(extra)
    return env


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def rss_mb(self) -> float:
        """Resident memory of the server process, in MiB (0 when unknown)."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return 0.0
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process (all threads) so far."""
        try:
            fields = (
                Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1]
            )
        except OSError:
            return float("nan")
        user, system = fields.split()[11:13]
        return (int(user) + int(system)) / os.sysconf("SC_CLK_TCK")

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise RuntimeError(
            f"{self.name} not healthy in {timeout}s:\n{self.log.read_text()}"
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def launch_server(
    name: str,
    target: str,
    *,
    workdir: Path,
    env: Mapping[str, str],
    root: Path = ROOT,
) -> Server:
    """Start ``uvicorn target`` from the source tree ``root``; not yet healthy."""
    port = free_port()
    log = workdir / f"{name}.log"
    command = [sys.executable, "-m", "uvicorn", target, "--host", LOOPBACK]
    command += ["--port", str(port), "--loop", "uvloop", "--http", "httptools"]
    command += ["--no-access-log", "--log-level", "warning"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            _pinned(SERVER_CORE, command),
            cwd=workdir,
            env=_environment(env, root),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Server(name, process, port, log)


def start_server(
    name: str, target: str, *, workdir: Path, env: Mapping[str, str]
) -> Server:
    """Start ``uvicorn target`` and wait until ``/health`` answers."""
    server = launch_server(name, target, workdir=workdir, env=env)
    try:
        server.wait_healthy()
    except BaseException:
        server.stop()
        raise
    return server


def launch_floor(
    name: str,
    target: str = "bench.floor:app",
    *,
    workdir: Path,
    database: Path,
    tokens: Path,
    env: Mapping[str, str] | None = None,
) -> Server:
    """Start a floor (bare or Tenchi) on ``database``; not yet healthy."""
    settings = {"BENCH_FLOOR_DB": str(database), "BENCH_FLOOR_TOKENS": str(tokens)}
    return launch_server(name, target, workdir=workdir, env={**settings, **(env or {})})


class LoadGenerator:
    """The pinned load-generator process; ``run`` sends one spec, returns its result."""

    def __init__(self) -> None:
        command = [sys.executable, "-m", "bench.loadgen"]
        self.process = subprocess.Popen(
            _pinned(LOAD_CORE, command),
            env=_environment({}),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(spec) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the load generator exited")
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
