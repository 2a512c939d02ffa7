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
from typing import Any

import httpx
import pytest

# The shared suites in tests/support assert too; rewrite them before import.
pytest.register_assert_rewrite("tests.support")

from tests.support.gcs_emulator import (  # noqa: E402
    GcsEmulator,
    running_gcs_emulator,
)
from tests.support.openapi_conformance import DRIFTS, record  # noqa: E402
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


@pytest.fixture(scope="session", autouse=True)
def responses_checked_against_openapi() -> Generator[None]:
    """Every response a test receives through httpx is checked against openapi.json."""
    sync_send, async_send = httpx.Client.send, httpx.AsyncClient.send

    def send(
        self: httpx.Client, request: httpx.Request, **options: Any
    ) -> httpx.Response:
        response = sync_send(self, request, **options)
        record(response)
        return response

    async def asend(
        self: httpx.AsyncClient, request: httpx.Request, **options: Any
    ) -> httpx.Response:
        response = await async_send(self, request, **options)
        record(response)
        return response

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx.Client, "send", send)
        patch.setattr(httpx.AsyncClient, "send", asend)
        yield


@pytest.fixture(autouse=True)
def no_openapi_drift(request: pytest.FixtureRequest) -> Generator[None]:
    """Fail a test whose responses drifted from openapi.json (unless it expects it)."""
    DRIFTS.clear()
    yield
    drifts, DRIFTS[:] = list(DRIFTS), []
    if drifts and request.node.get_closest_marker("openapi_drift") is None:
        pytest.fail("\n".join(drifts), pytrace=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "openapi_drift: the test provokes responses openapi.json does not describe",
    )
