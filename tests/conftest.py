"""Fixtures for every suite under tests/: GCS emulator, Redis, storage adapter.

``WENCHANG_TEST_STORAGE=memory|sqlite|file|gcs`` (default sqlite) selects the
adapter behind ``storage_url`` (and
``tests.support.storage_adapters.storage_url_for_tests``); with ``gcs`` the
emulator starts once for the session and ``STORAGE_EMULATOR_HOST`` points at it
for every test.
"""

import os
from collections.abc import Generator
from pathlib import Path

import pytest

# The shared suites in tests/support assert too; rewrite them before import.
pytest.register_assert_rewrite("tests.support")

from tests.support.gcs_emulator import (  # noqa: E402
    GcsEmulator,
    running_gcs_emulator,
)
from tests.support.redis_server import (  # noqa: E402
    RedisServer,
    redis_binary,
    running_redis,
)
from tests.support.storage_adapters import (  # noqa: E402
    EMULATOR_ENV,
    selected_storage,
    storage_url_for_tests,
)


@pytest.fixture(scope="session")
def gcs_emulator(
    tmp_path_factory: pytest.TempPathFactory,
) -> Generator[GcsEmulator]:
    """fake-gcs-server behind the precondition proxy, for the whole session."""
    with (
        running_gcs_emulator(tmp_path_factory.mktemp("gcs")) as emulator,
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setenv(EMULATOR_ENV, emulator.url)
        yield emulator


@pytest.fixture(scope="session", autouse=True)
def selected_storage_backend(request: pytest.FixtureRequest) -> str:
    """Start what the selected adapter needs before any test builds an app."""
    kind = selected_storage()
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
    return kind


@pytest.fixture
def storage_url(tmp_path: Path) -> str:
    """A fresh, empty storage of the selected adapter (default ``memory://``)."""
    return storage_url_for_tests(tmp_path)


@pytest.fixture(scope="session")
def redis_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Generator[RedisServer]:
    """A private redis-server for the session (skipped only where none is installed)."""
    binary = redis_binary()
    if binary is None and os.environ.get("CI"):
        pytest.fail("redis-server is missing on CI; .ci/run must install it")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (apt-get install redis-server); "
            ".ci/run installs it"
        )
    with running_redis(binary, tmp_path_factory.mktemp("redis")) as server:
        yield server
