"""What only GCS renames do: a marked destination, a commit on the source, settling.

A writer that crashes after writing the marked destination leaves the source
the only file (readers treat the mark as absent) until the mark is past the
bound its writer wrote in it (never a reader's own, maybe shorter), when the
next operation rolls it back; one that crashes after its
commit leaves the destination, which the next reader finishes, mark cleared
and history moved. A write to the source or a create of the destination
racing a rename: exactly one of the two lands, nothing is lost. A crash is
the proxy losing the answer of one mutation and then answering nothing.
"""

import asyncio
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass

import aiohttp
import pytest
from tenchi.errors import AppError

from app.features.memory.ports import HistoryRetention, Write
from app.infra.gcs.client import GcsClient
from app.infra.gcs.history import GcsHistory, is_pending
from app.infra.gcs.location import parse_gcs_url
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.storage import GcsStorage
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.storage_history_conformance import META, change, history

TEA, CHAI = "user/alice/notes/tea.md", "user/alice/projects/chai.md"
ENTITY = "user/alice/"
RENAME = change("rename_file")


@dataclass
class Bucket:
    writer: GcsStorage
    """A replica whose marks stay young (an hour): its rename may still commit."""
    waiting: GcsStorage
    """Another replica with the same bound."""
    settling: GcsStorage
    """A replica whose own bound is nought: its marks are past it at once."""
    objects: GcsObjects
    prefix: str
    emulator: GcsEmulator

    async def marked(self, key: str) -> bool:
        found = await self.objects.describe(self.prefix + key)
        return found is not None and is_pending(found)

    async def crash_at(
        self, suffix: str, source_version: str, by: GcsStorage | None = None
    ) -> None:
        """A rename (by ``writer`` unless named) whose process dies once the
        mutation of ``suffix`` landed."""
        proxy = self.emulator.proxy
        proxy.lose_answer(suffix, then_down=True)
        try:
            with pytest.raises(AppError):
                await (by or self.writer).rename_if_version(
                    TEA, CHAI, source_version, replacing=None, change=RENAME
                )
        finally:
            proxy.lose_answer(None)
            proxy.answer_again()


@pytest.fixture
async def bucket(gcs_emulator: GcsEmulator) -> AsyncGenerator[Bucket]:
    url = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?timeout=2&attempts=1"
    location = parse_gcs_url(url)
    async with aiohttp.ClientSession() as session:
        client = GcsClient(session=session)

        def replica(pending: float) -> GcsStorage:
            return GcsStorage(client, location, pending_seconds=pending)

        objects = GcsObjects(client, location)
        yield Bucket(
            replica(3600),
            replica(3600),
            replica(0),
            objects,
            location.prefix,
            gcs_emulator,
        )


async def write(
    storage: GcsStorage, key: str, data: bytes, expected: str | None
) -> str | None:
    operation = "write_file" if expected is None else "append_line"
    return await storage.put_if_version(
        Write(key, data, META, change=change(operation)), expected
    )


async def listed(storage: GcsStorage) -> list[str]:
    page = await storage.list_page(ENTITY, start_after=None, limit=10)
    return [item.key for item in page]


async def test_a_crash_after_the_destination_is_written_leaves_the_source_alone(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None

    await bucket.crash_at("projects/chai.md", first)

    assert await bucket.marked(CHAI)
    source = await bucket.waiting.get(TEA)
    assert source is not None and source.version == first
    assert await bucket.waiting.get(CHAI) is None
    assert await listed(bucket.waiting) == [TEA]
    assert await bucket.waiting.count(ENTITY) == 1
    assert await history(bucket.waiting, CHAI) == []
    # A replica whose own bound is shorter leaves the mark: its writer's holds.
    assert await bucket.settling.get(CHAI) is None
    assert await bucket.marked(CHAI)


async def test_a_crash_after_the_destination_is_written_is_rolled_back_past_its_bound(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None

    await bucket.crash_at("projects/chai.md", first, by=bucket.settling)

    assert await bucket.marked(CHAI)
    # Past its writer's bound the next reader rolls it back, whatever its own
    # bound; the rename can run again.
    assert await bucket.waiting.get(CHAI) is None
    assert await bucket.objects.describe(bucket.prefix + CHAI) is None
    version = await bucket.writer.rename_if_version(
        TEA, CHAI, first, replacing=None, change=RENAME
    )
    moved = await bucket.waiting.get(CHAI)
    assert moved is not None and (moved.data, moved.version) == (b"one\n", version)
    assert await bucket.waiting.get(TEA) is None


async def test_a_crash_after_the_commit_is_finished_by_the_next_reader(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    second = await write(bucket.writer, TEA, b"two\n", first)
    assert second is not None

    await bucket.crash_at("notes/tea.md", second)

    assert await bucket.marked(CHAI)
    assert await bucket.waiting.get(TEA) is None
    moved = await bucket.waiting.get(CHAI)
    assert moved is not None and moved.data == b"two\n"
    assert not await bucket.marked(CHAI)
    assert await listed(bucket.waiting) == [CHAI]
    assert [(r.version, r.operation) for r in await history(bucket.waiting, CHAI)] == [
        (moved.version, "rename_file"),
        (second, "append_line"),
        (first, "write_file"),
    ]
    assert await history(bucket.waiting, TEA) == []


async def test_a_crash_after_the_history_is_copied_copies_it_again_in_place(
    bucket: Bucket,
) -> None:
    """The next reader finishing the rename copies the moved records again,
    to the same places: its own earlier copies are not the destination's."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    archive = GcsHistory(bucket.objects, bucket.prefix, HistoryRetention())
    copied = archive.order_name(CHAI, int(first))

    await bucket.crash_at(copied, first)

    moved = await bucket.waiting.get(CHAI)
    assert moved is not None and moved.data == b"one\n"
    records = await history(bucket.waiting, CHAI)
    assert [r.version for r in records] == [moved.version, first]


async def test_a_file_created_at_the_old_path_after_a_crashed_commit_keeps_both(
    bucket: Bucket,
) -> None:
    """The commit's tombstone, archived by that create, still says it landed."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    await bucket.crash_at("notes/tea.md", first)

    again = await write(bucket.writer, TEA, b"new\n", None)

    assert again is not None
    moved, fresh = await bucket.waiting.get(CHAI), await bucket.waiting.get(TEA)
    assert moved is not None and moved.data == b"one\n"
    assert fresh is not None and (fresh.data, fresh.version) == (b"new\n", again)
    assert await listed(bucket.waiting) == [TEA, CHAI]
    records = await history(bucket.waiting, CHAI)
    assert [r.operation for r in records] == ["rename_file", "write_file"]


async def test_a_write_to_the_source_racing_a_rename_is_never_lost(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None

    renamed, written = await asyncio.gather(
        bucket.writer.rename_if_version(
            TEA, CHAI, first, replacing=None, change=RENAME
        ),
        write(bucket.waiting, TEA, b"two\n", first),
    )

    assert (renamed is None) != (written is None)
    source, moved = await bucket.waiting.get(TEA), await bucket.waiting.get(CHAI)
    if written is not None:
        assert source is not None and source.data == b"two\n" and moved is None
        assert not await bucket.marked(CHAI)
    else:
        assert source is None and moved is not None and moved.data == b"one\n"


async def test_a_write_to_the_source_after_a_crash_before_the_commit_wins(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    await bucket.crash_at("projects/chai.md", first)

    written = await write(bucket.waiting, TEA, b"two\n", first)

    assert written is not None
    # The commit can never happen now: even a young mark is rolled back.
    assert await bucket.waiting.get(CHAI) is None
    assert await bucket.objects.describe(bucket.prefix + CHAI) is None
    source = await bucket.waiting.get(TEA)
    assert source is not None and source.data == b"two\n"


async def test_a_create_racing_a_rename_onto_its_path_exactly_one_wins(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None

    renamed, created = await asyncio.gather(
        bucket.writer.rename_if_version(
            TEA, CHAI, first, replacing=None, change=RENAME
        ),
        write(bucket.waiting, CHAI, b"mine\n", None),
    )

    assert (renamed is None) != (created is None)
    there = await bucket.waiting.get(CHAI)
    source = await bucket.waiting.get(TEA)
    assert there is not None and there.version == (renamed or created)
    if created is not None:
        assert there.data == b"mine\n"
        assert source is not None and source.version == first
    else:
        assert there.data == b"one\n" and source is None


async def test_a_create_meeting_a_crashed_mark_rolls_it_back_and_lands(
    bucket: Bucket,
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    await bucket.crash_at("projects/chai.md", first, by=bucket.settling)

    created = await write(bucket.waiting, CHAI, b"mine\n", None)

    assert created is not None
    there = await bucket.waiting.get(CHAI)
    assert there is not None and there.data == b"mine\n"
    source = await bucket.waiting.get(TEA)
    assert source is not None and source.version == first


async def test_a_rename_keeps_the_moved_history_within_retention(
    bucket: Bucket,
) -> None:
    version = await write(bucket.writer, TEA, b"0\n", None)
    for line in range(1, 5):
        assert version is not None
        version = await write(bucket.writer, TEA, f"{line}\n".encode(), version)
    assert version is not None
    location = parse_gcs_url(f"gcs://{TEST_BUCKET}/{bucket.prefix}")
    async with aiohttp.ClientSession() as session:
        keeping = GcsStorage(
            GcsClient(session=session), location, retention=HistoryRetention(3)
        )
        moved = await keeping.rename_if_version(
            TEA, CHAI, version, replacing=None, change=RENAME
        )

        records = await history(keeping, CHAI)
    assert [r.version for r in records][:2] == [moved, version]
    assert len(records) == 3


async def test_records_moved_after_the_destinations_own_read_and_page_by_version(
    bucket: Bucket,
) -> None:
    """The source's records are older than the replaced file's, so they are
    placed after it, and still found by their versions, one page at a time."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    there = await write(bucket.writer, CHAI, b"old\n", None)
    assert first is not None and there is not None
    moved = await bucket.writer.rename_if_version(
        TEA, CHAI, first, replacing=there, change=RENAME
    )

    walked: list[str] = []
    after: str | None = None
    while True:
        page = await bucket.waiting.list_versions(CHAI, after=after, limit=1)
        if not page:
            break
        walked.append(page[0].version)
        after = page[0].version
    assert walked == [moved, first, there]
    # The place the first record took (just above the replaced file's own
    # generation) names no version: a version never written is not found there.
    assert await bucket.waiting.get_version(CHAI, str(int(there) + 1)) is None
    for version, data in ((first, b"one\n"), (there, b"old\n")):
        record = await bucket.waiting.get_version(CHAI, version)
        assert record is not None and record.data == data


@pytest.mark.parametrize("suffix", ["projects/chai.md", "notes/tea.md"])
async def test_a_lost_answer_of_the_mark_or_the_commit_still_moves_the_file_once(
    bucket: Bucket, suffix: str
) -> None:
    """The write id each carries tells the rename its mutation landed."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    proxy = bucket.emulator.proxy
    before = proxy.lost
    proxy.lose_answer(suffix)
    try:
        version = await bucket.writer.rename_if_version(
            TEA, CHAI, first, replacing=None, change=RENAME
        )
    finally:
        proxy.lose_answer(None)

    assert proxy.lost == before + 1
    moved = await bucket.waiting.get(CHAI)
    assert moved is not None and (moved.data, moved.version) == (b"one\n", version)
    assert await bucket.waiting.get(TEA) is None
    assert not await bucket.marked(CHAI)
