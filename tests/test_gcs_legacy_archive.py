"""An untracked record an older release archived is no record, and breaks nothing.

Before e92b30a, archiving the untracked generation of a file (one written
without a change, a rename's source say) wrote an archived object with no
operation and no actor. Buckets keep such objects. Every read of a key's
archive skips them: the history lists, finds and prunes only records, and a
write or rename of the key after the upgrade lands and answers as usual.
"""

import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass

import aiohttp
import pytest

from app.features.memory.ports import HistoryRetention, Write
from app.infra.gcs.client import GcsClient
from app.infra.gcs.history import VERSION, GcsHistory
from app.infra.gcs.location import parse_gcs_url
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.storage import GcsStorage
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.storage_history_conformance import META, change, history

TEA, CHAI = "user/alice/notes/tea.md", "user/alice/projects/chai.md"
LEGACY = "1000"
"""The legacy object's version: older than any generation the emulator gives."""


@dataclass
class Legacy:
    storage: GcsStorage
    objects: GcsObjects
    history: GcsHistory


@pytest.fixture
async def legacy(gcs_emulator: GcsEmulator) -> AsyncGenerator[Legacy]:
    """A bucket prefix whose ``TEA`` has two records and one untracked archive."""
    url = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?timeout=5&attempts=3"
    location = parse_gcs_url(url)
    async with aiohttp.ClientSession() as session:
        client = GcsClient(session=session)
        objects = GcsObjects(client, location)
        retention = HistoryRetention(3)
        storage = GcsStorage(client, location, retention=retention)
        archive = GcsHistory(objects, location.prefix, retention)
        first = await storage.put_if_version(
            Write(TEA, b"one\n", META, change=change("write_file")), None
        )
        assert first is not None
        second = await storage.put_if_version(
            Write(TEA, b"two\n", META, change=change("append_line")), first
        )
        assert second is not None
        untracked = {"description": "Tea", VERSION: LEGACY}  # no operation, no actor
        name = archive.order_name(TEA, int(LEGACY))
        assert await objects.upload(name, b"legacy\n", untracked, None) is not None
        yield Legacy(storage, objects, archive)


async def test_the_history_lists_and_finds_records_only(legacy: Legacy) -> None:
    records = await history(legacy.storage, TEA)

    assert [r.operation for r in records] == ["append_line", "write_file"]
    assert await legacy.storage.get_version(TEA, LEGACY) is None
    for record in records:
        found = await legacy.storage.get_version(TEA, record.version)
        assert found is not None and found.operation == record.operation


async def test_pages_after_a_record_skip_the_untracked_archive(legacy: Legacy) -> None:
    newest = (await history(legacy.storage, TEA))[0]

    page = await legacy.storage.list_versions(TEA, after=newest.version, limit=5)

    assert [r.operation for r in page] == ["write_file"]


async def test_writes_after_it_land_and_prune_records_only(legacy: Legacy) -> None:
    """Retention keeps three: each write prunes, past the untracked object."""
    version = (await history(legacy.storage, TEA))[0].version
    for line in range(3):
        version = await legacy.storage.put_if_version(
            Write(TEA, f"{line}\n".encode(), META, change=change("append_line")),
            version,
        )
        assert version is not None

    records = await history(legacy.storage, TEA)
    assert [r.operation for r in records] == ["append_line"] * 3


async def test_a_rename_after_it_moves_the_records(legacy: Legacy) -> None:
    version = (await history(legacy.storage, TEA))[0].version

    moved = await legacy.storage.rename_if_version(
        TEA, CHAI, version, replacing=None, change=change("rename_file")
    )

    records = await history(legacy.storage, CHAI)
    assert moved is not None
    assert [r.operation for r in records] == [
        "rename_file",
        "append_line",
        "write_file",
    ]
