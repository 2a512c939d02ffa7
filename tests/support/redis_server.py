"""A private redis-server on a free loopback port, bounded and always stopped.

It keeps nothing on disk. ``restart()`` stops it and starts it again on the
same port (empty), which is how tests stage a cache outage.
"""

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.loopback import LOOPBACK, free_port

START_TIMEOUT_SECONDS = 20.0
STOP_TIMEOUT_SECONDS = 10.0


def redis_binary() -> str | None:
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None
    )


def _answers(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=1.0) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class RedisServer:
    binary: str
    port: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{LOOPBACK}:{self.port}/0"

    def start(self) -> None:
        log = self.workdir / f"redis-{self.port}.log"
        command = [self.binary, "--port", str(self.port), "--bind", LOOPBACK]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.workdir)]
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=output, stderr=output
            )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not _answers(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start:\n{log.read_text()}")
            time.sleep(0.05)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT_SECONDS)

    @contextmanager
    def down(self) -> Generator[None]:
        """Redis stopped for the block, then started again (empty)."""
        self.stop()
        try:
            yield
        finally:
            self.start()


@contextmanager
def running_redis(binary: str, workdir: Path) -> Generator[RedisServer]:
    server = RedisServer(binary, free_port(), workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
