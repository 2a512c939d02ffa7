"""The filesystem storage's lock file: shared to read, exclusive to write."""

import fcntl
import os
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def storage_lock(path: Path, operation: int, timeout: float) -> Generator[None]:
    """Hold ``flock(operation)`` on ``path``; TimeoutError after ``timeout`` s."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline, delay = time.monotonic() + timeout, 0.001
        while True:
            try:
                fcntl.flock(descriptor, operation | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError("storage lock held too long") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        yield
    finally:
        os.close(descriptor)
