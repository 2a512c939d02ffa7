"""Every storage adapter as tests use it: fresh and empty, with a way to take it down.

``WENCHANG_TEST_STORAGE`` (``memory`` | ``sqlite`` | ``file`` | ``gcs``) picks
the adapter behind ``storage_url_for_tests``, which suites that build the app
from settings use for their storage URL; ``gcs`` needs the session's emulator
(``STORAGE_EMULATOR_HOST``), which ``tests/conftest.py`` starts when selected.
``open_adapter`` opens one adapter with a staged outage, for the conformance
suite and any other suite that wants every backend.
"""

import os
import sqlite3
import uuid
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass
from pathlib import Path

from app.features.memory.ports import HistoryRetention, Storage
from app.infra.port_wiring import open_storage
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator

ADAPTERS = ("memory", "sqlite", "file", "gcs")
STORAGE_ENV = "WENCHANG_TEST_STORAGE"
EMULATOR_ENV = "STORAGE_EMULATOR_HOST"
GCS_TEST_OPTIONS = "timeout=5&attempts=2"


DEFAULT_TEST_STORAGE = "sqlite"
"""What users run by default, so the plain test run exercises it."""


def selected_storage() -> str:
    """The adapter named by WENCHANG_TEST_STORAGE (default: SQLite, the product's)."""
    kind = os.environ.get(STORAGE_ENV, DEFAULT_TEST_STORAGE) or DEFAULT_TEST_STORAGE
    if kind not in ADAPTERS:
        raise ValueError(f"{STORAGE_ENV}={kind!r}; use one of {', '.join(ADAPTERS)}")
    return kind


def storage_url(kind: str, root: Path) -> str:
    """A URL of a fresh, empty ``kind`` storage; gcs gets a new prefix in the bucket."""
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{root / 'wenchang.db'}"
    if kind == "file":
        return f"file://{root / 'files'}"
    if kind == "gcs":
        if not os.environ.get(EMULATOR_ENV):
            raise RuntimeError(
                f"gcs test storage needs {EMULATOR_ENV}; request the gcs_emulator "
                f"fixture or run with {STORAGE_ENV}=gcs"
            )
        return f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?{GCS_TEST_OPTIONS}"
    raise ValueError(f"unknown storage adapter {kind!r}")


def storage_url_for_tests(root: Path) -> str:
    """A fresh storage URL of the adapter this test run selected."""
    return storage_url(selected_storage(), root)


Outage = Callable[[], AbstractContextManager[None]]


@dataclass(frozen=True, slots=True)
class AdapterUnderTest:
    """An open, empty adapter; ``sibling()`` opens a second client of its data.

    ``outage`` takes the backend down for a block (None where nothing can go
    down); calls during it raise BackendUnavailable with ``outage_reason``.
    ``retaining(retention)`` opens a client that prunes history to
    ``retention`` (for memory: a new, empty storage).
    """

    kind: str
    storage: Storage
    sibling: Callable[[], AbstractAsyncContextManager[Storage]]
    outage: Outage | None
    outage_reason: str
    retaining: Callable[[HistoryRetention], AbstractAsyncContextManager[Storage]]


@contextmanager
def _locked_database(path: Path) -> Generator[None]:
    """Another process's exclusive transaction: writers wait, then time out."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=0)
    connection.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        connection.execute("ROLLBACK")
        connection.close()


@contextmanager
def _missing_directory(root: Path) -> Generator[None]:
    """The storage directory replaced by a plain file, as on a lost mount."""
    aside = root.with_name(root.name + ".away")
    root.rename(aside)
    root.write_text("not a directory")
    try:
        yield
    finally:
        root.unlink()
        aside.rename(root)


@asynccontextmanager
async def _same(storage: Storage) -> AsyncGenerator[Storage]:
    yield storage


def _outage(
    kind: str, root: Path, emulator: GcsEmulator | None
) -> tuple[Outage | None, str]:
    if kind == "sqlite":
        return (lambda: _locked_database(root / "wenchang.db")), "timeout"
    if kind == "file":
        return (lambda: _missing_directory(root / "files")), "unavailable"
    if kind == "gcs" and emulator is not None:
        return emulator.unreachable, "unavailable"
    return None, "unavailable"


@asynccontextmanager
async def open_adapter(
    kind: str, root: Path, emulator: GcsEmulator | None = None
) -> AsyncGenerator[AdapterUnderTest]:
    """Open a fresh ``kind`` adapter under ``root`` (gcs needs the emulator)."""
    url = storage_url(kind, root)
    outage, reason = _outage(kind, root, emulator)
    async with open_storage(url) as storage:

        def sibling() -> AbstractAsyncContextManager[Storage]:
            return _same(storage) if kind == "memory" else open_storage(url)

        def retaining(
            retention: HistoryRetention,
        ) -> AbstractAsyncContextManager[Storage]:
            return open_storage(url, retention=retention)

        yield AdapterUnderTest(kind, storage, sibling, outage, reason, retaining)
