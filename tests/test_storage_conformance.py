"""The storage conformance suite on every adapter: memory, SQLite, file, GCS."""

from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from tests.support.storage_adapters import ADAPTERS, AdapterUnderTest, open_adapter
from tests.support.storage_conformance import StorageConformance


class TestStorageConformance(StorageConformance):
    @pytest.fixture(params=ADAPTERS)
    async def adapter(
        self, request: pytest.FixtureRequest, tmp_path: Path
    ) -> AsyncGenerator[AdapterUnderTest]:
        kind: str = request.param
        emulator = request.getfixturevalue("gcs_emulator") if kind == "gcs" else None
        async with open_adapter(kind, tmp_path, emulator) as adapter:
            yield adapter
