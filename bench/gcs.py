"""The GCS emulator for the index curve: the test suite's fake-gcs-server fixture.

Files are seeded through Wenchang's own GCS adapter, so object names, metadata
and generations are exactly what the server later lists.
"""

import asyncio
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.features.memory.ports import Write
from bench.seed import AREAS, sample_file

SEED_CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class Emulator:
    url: str
    bucket: str

    @property
    def storage_url(self) -> str:
        return f"gcs://{self.bucket}/bench"


@contextmanager
def emulator(workdir: Path) -> Iterator[Emulator | None]:
    """A running emulator (None when fake-gcs-server is not installed)."""
    try:
        from tests.support.gcs_emulator import TEST_BUCKET, running_gcs_emulator
    except ImportError:
        yield None
        return
    with running_gcs_emulator(workdir) as running:
        yield Emulator(running.url, TEST_BUCKET)


async def _seed(emulator: Emulator, sizes: Sequence[int]) -> None:
    from app.features.memory.domain import file_key
    from app.infra.port_wiring import open_storage

    gate = asyncio.Semaphore(SEED_CONCURRENCY)
    async with open_storage(emulator.storage_url) as storage:

        async def put(n: int, i: int) -> None:
            data, metadata = sample_file(f"f{i:04d}", i)
            key = file_key("user", f"sized-{n}", AREAS[i % len(AREAS)], f"f{i:04d}")
            async with gate:
                await storage.put(Write(key, data, metadata))

        await asyncio.gather(*(put(n, i) for n in sizes for i in range(n)))


def point_at(emulator: Emulator) -> None:
    """This process's GCS client talks to the emulator."""
    os.environ["STORAGE_EMULATOR_HOST"] = emulator.url


def seed_sized(emulator: Emulator, sizes: Sequence[int]) -> None:
    """Entity ``sized-<n>`` holds n files, for each n, as in the SQLite dataset."""
    point_at(emulator)
    asyncio.run(_seed(emulator, sizes))
