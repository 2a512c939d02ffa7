"""A real Wenchang for the client's own tests: ``wenchang serve`` on SQLite in a
subprocess, and fresh tokens on it.

The client is installed alone (no server packages), so the server runs from the
command in ``WENCHANG_CLI`` (default ``wenchang``, e.g. ``/repo/.venv/bin/wenchang``).
"""

import os
import shlex
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

START_SECONDS = 30.0


def _cli() -> list[str]:
    return shlex.split(os.environ.get("WENCHANG_CLI", "wenchang"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LiveServer:
    def __init__(self, url: str, environment: dict[str, str]) -> None:
        self.url = url
        self._environment = environment

    def token(self, scope: str = "user") -> str:
        """A token granting ``scope`` on a fresh entity (owner)."""
        grant = f"{scope}=e-{uuid.uuid4().hex[:12]}:owner"
        created = subprocess.run(
            [*_cli(), "token", "create", "--grant", grant, "--label", "client-tests"],
            env=self._environment,
            capture_output=True,
            text=True,
            check=True,
        )
        token = created.stdout.strip().splitlines()[-1]
        _wait_until_accepted(self.url, token)
        return token


def _wait_until_accepted(url: str, token: str) -> None:
    """The server re-reads its token file at most once a second: a token created
    just now is accepted within that second, so wait for it rather than race it."""
    deadline = time.monotonic() + 5.0
    headers = {"Authorization": f"Bearer {token}"}
    while httpx.get(f"{url}/v1/index", headers=headers).status_code == 401:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not accept a token created for it")
        time.sleep(0.1)


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"wenchang serve exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.1)
    raise RuntimeError("wenchang serve did not answer /health in time")


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root: Path = tmp_path_factory.mktemp("wenchang")
    environment = os.environ | {
        "WENCHANG_STORAGE": f"sqlite:///{root / 'wenchang.db'}",
        "WENCHANG_TOKENS_FILE": str(root / "tokens.json"),
    }
    port = _free_port()
    command = [*_cli(), "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield LiveServer(url, environment)
    finally:
        process.terminate()
        process.wait(timeout=10)


type TokenFor = Callable[[], str]


@pytest.fixture
def token(live_server: LiveServer) -> str:
    return live_server.token()
