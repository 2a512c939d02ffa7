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
from datetime import timedelta

import aiohttp
import pytest
from tenchi.errors import AppError

from app.features.memory.ports import HistoryRetention, Write
from app.infra.gcs.change_log import GcsChangeLog
from app.infra.gcs.client import GcsClient
from app.infra.gcs.deletes import GcsDeletes
from app.infra.gcs.history import RENAMING, GcsHistory, is_pending
from app.infra.gcs.location import GcsLocation, parse_gcs_url
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.renames import BOUND, SETTLE_STEPS, WAIT_SECONDS, GcsRenames
from app.infra.gcs.resources import ObjectResource
from app.infra.gcs.storage import GcsStorage
from app.shared.errors import backend_unavailable, invalid_argument
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
    client: GcsClient

    def location(self, query: str = "timeout=2&attempts=1") -> GcsLocation:
        return parse_gcs_url(f"gcs://{TEST_BUCKET}/{self.prefix}?{query}")

    def renames(self, pending: float) -> GcsRenames:
        """The rename machinery one replica runs (its reads of a listed mark)."""
        prefix, objects = self.prefix, self.objects
        history = GcsHistory(objects, prefix, HistoryRetention())
        log = GcsChangeLog(
            objects, prefix, timedelta(days=7), archive_prefix=history.key_prefix
        )
        writes = GcsDeletes(objects, history, prefix, 2)
        return GcsRenames(
            objects, history, writes, log, prefix, timeout=2, pending_seconds=pending
        )

    async def marked(self, key: str) -> bool:
        found = await self.objects.describe(self.prefix + key)
        return found is not None and is_pending(found)

    async def crash_at(
        self, suffix: str, source_version: str, by: GcsStorage | None = None
    ) -> AppError:
        """A rename (by ``writer`` unless named) whose process dies once the
        mutation of ``suffix`` landed."""
        proxy = self.emulator.proxy
        proxy.lose_answer(suffix, then_down=True)
        try:
            with pytest.raises(AppError) as raised:
                await (by or self.writer).rename_if_version(
                    TEA, CHAI, source_version, replacing=None, change=RENAME
                )
        finally:
            proxy.lose_answer(None)
            proxy.answer_again()
        return raised.value


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
            client,
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

    crashed = await bucket.crash_at("projects/chai.md", first)

    # the lost answer's own error, not one from taking the mark back after it
    assert crashed.details.get("outcome") == "unknown"
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
    # The commit's tombstone, archived by the create, records the rename, empty.
    old = await history(bucket.waiting, TEA)
    shown = [(r.operation, r.deleted, r.size) for r in old]
    assert shown == [("write_file", False, 4), ("rename_file", True, 0)]
    tombstone = await bucket.waiting.get_version(TEA, old[1].version)
    assert tombstone is not None and tombstone.data == b""


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


@pytest.mark.parametrize("deleted", [False, True])
async def test_a_change_to_the_source_after_a_crash_before_the_commit_wins(
    bucket: Bucket, deleted: bool
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    await bucket.crash_at("projects/chai.md", first)

    if deleted:
        gone = change("delete_file")
        assert await bucket.waiting.delete_if_version(TEA, first, change=gone)
    else:
        assert await write(bucket.waiting, TEA, b"two\n", first) is not None

    # The commit can never happen now: even a young mark is rolled back.
    assert await bucket.waiting.get(CHAI) is None
    assert await bucket.objects.describe(bucket.prefix + CHAI) is None
    source = await bucket.waiting.get(TEA)
    if deleted:
        assert source is None
    else:
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
    for _ in range(4):  # a walk going round in circles ends
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


@pytest.mark.parametrize(
    ("query", "bound"), [("timeout=2", 60.0), ("timeout=30", 120.0)]
)
async def test_a_mark_carries_its_writers_bound_of_four_deadlines_or_a_minute(
    bucket: Bucket, query: str, bound: float
) -> None:
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    replica = GcsStorage(bucket.client, bucket.location(f"{query}&attempts=1"))

    await bucket.crash_at("projects/chai.md", first, by=replica)

    found = await bucket.objects.describe(bucket.prefix + CHAI)
    assert found is not None and is_pending(found)
    assert float((found.get("metadata") or {})[BOUND]) == bound


@pytest.mark.parametrize(("pending", "lands"), [(10.0, False), (15.0, True)])
async def test_a_rename_commits_only_while_a_deadline_ends_within_half_its_bound(
    bucket: Bucket, pending: float, lands: bool
) -> None:
    """With five-second deadlines a bound of ten seconds leaves no time for the
    commit: the rename takes its mark back and fails; fifteen leaves one."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    replica = GcsStorage(
        bucket.client, bucket.location("timeout=5&attempts=1"), pending_seconds=pending
    )

    renamed = await replica.rename_if_version(
        TEA, CHAI, first, replacing=None, change=RENAME
    )

    source, moved = await bucket.waiting.get(TEA), await bucket.waiting.get(CHAI)
    assert (renamed is not None) is lands
    assert not await bucket.marked(CHAI)
    if lands:
        assert source is None and moved is not None and moved.version == renamed
    else:
        assert moved is None and source is not None and source.version == first
        assert await bucket.objects.describe(bucket.prefix + CHAI) is None


async def test_a_mark_without_a_bound_is_judged_by_the_readers_own(
    bucket: Bucket,
) -> None:
    """A mark written before marks carried their writer's bound."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    await bucket.crash_at("projects/chai.md", first)
    found = await bucket.objects.describe(bucket.prefix + CHAI)
    assert found is not None
    values = {k: v for k, v in (found.get("metadata") or {}).items() if k != BOUND}
    data = await bucket.objects.download(bucket.prefix + CHAI, str(found["generation"]))
    assert data is not None
    name, generation = bucket.prefix + CHAI, str(found["generation"])
    assert await bucket.objects.upload(name, data, values, generation) is not None

    assert await bucket.waiting.get(CHAI) is None
    assert await bucket.marked(CHAI)  # young by an hour
    assert await bucket.settling.get(CHAI) is None
    assert await bucket.objects.describe(bucket.prefix + CHAI) is None  # nought
    source = await bucket.waiting.get(TEA)
    assert source is not None and source.version == first


@pytest.mark.parametrize("suffix", ["projects/chai.md", "notes/tea.md"])
async def test_a_listed_mark_is_settled_from_its_own_description(
    bucket: Bucket, suffix: str
) -> None:
    """A listing's item carries no creation time: the mark is described again,
    and what now stands there is the answer (a young mark: no file yet)."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    await bucket.crash_at(suffix, first)
    found = await bucket.objects.describe(bucket.prefix + CHAI)
    assert found is not None
    listed: ObjectResource = {
        "name": found["name"],
        "generation": found["generation"],
        "metadata": found.get("metadata") or {},
    }
    moved = await bucket.waiting.get(CHAI)  # finishes a committed rename

    settled = await bucket.renames(3600).settled(CHAI, listed)

    if moved is None:
        assert settled is None and await bucket.marked(CHAI)
    else:
        assert settled is not None and str(settled["generation"]) == moved.version


async def test_a_rename_of_a_missing_or_deleted_source_or_to_a_name_too_long_fails(
    bucket: Bucket,
) -> None:
    """A source that is not there, or only a commit's tombstone (its rename
    crashed after the commit), moves nothing; a destination whose archived
    records would need a name over 1,024 bytes is refused before any write."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    assert first is not None
    coffee = "user/alice/notes/coffee.md"
    moved = bucket.writer.rename_if_version
    assert await moved(coffee, CHAI, first, replacing=None, change=RENAME) is None
    long = "user/alice/notes/" + "x" * 1000 + ".md"
    with pytest.raises(AppError) as raised:
        await moved(TEA, long, first, replacing=None, change=RENAME)
    assert raised.value.definition is invalid_argument
    await bucket.crash_at("notes/tea.md", first)
    tombstone = await bucket.objects.describe(bucket.prefix + TEA)
    assert tombstone is not None
    version = str(tombstone["generation"])

    assert await moved(TEA, coffee, version, replacing=None, change=RENAME) is None
    assert await bucket.waiting.get(coffee) is None
    there = await bucket.waiting.get(CHAI)
    assert there is not None and there.data == b"one\n"


async def test_a_rename_onto_a_tombstone_left_behind_archives_it_empty(
    bucket: Bucket,
) -> None:
    """The destination holds the tombstone of a crashed rename's commit: the
    rename over it archives that tombstone's record with no data."""
    first = await write(bucket.writer, TEA, b"one\n", None)
    coffee = "user/alice/notes/coffee.md"
    other = await write(bucket.writer, coffee, b"two\n", None)
    assert first is not None and other is not None
    await bucket.crash_at("notes/tea.md", first)

    version = await bucket.writer.rename_if_version(
        coffee, TEA, other, replacing=None, change=RENAME
    )

    there = await bucket.waiting.get(TEA)
    assert version is not None and there is not None and there.data == b"two\n"
    records = await history(bucket.waiting, TEA)
    deleted = [r for r in records if r.deleted]
    assert [(r.operation, r.size) for r in deleted] == [("rename_file", 0)]
    found = await bucket.waiting.get_version(TEA, deleted[0].version)
    assert found is not None and found.data == b""


def mark(generation: int) -> ObjectResource:
    """A marked object as a settlement may hand it back (no file yet)."""
    return {"name": "m", "generation": str(generation), "metadata": {RENAMING: TEA}}


class Settlements:
    """A ``_settle`` standing in for a backend that answers each settlement with
    another mark (its ``last`` answer, if any, at step ``at``)."""

    def __init__(self, at: int = 0, last: ObjectResource | None = None) -> None:
        self.met: list[tuple[str, str, bool]] = []
        self.at, self.last = at, last

    async def __call__(
        self, key: str, resource: ObjectResource, *, wait: bool
    ) -> ObjectResource | None:
        self.met.append((key, str(resource["generation"]), wait))
        return self.last if len(self.met) == self.at else mark(len(self.met) + 1)


@pytest.mark.parametrize("wait", [False, True])
async def test_a_read_meeting_a_mark_at_every_step_gives_up_after_its_steps(
    bucket: Bucket, monkeypatch: pytest.MonkeyPatch, wait: bool
) -> None:
    """Each settlement commits, rolls back or waits, so one that keeps meeting a
    mark is a backend not doing what it answers: BACKEND_UNAVAILABLE after
    ``SETTLE_STEPS`` settlements for a reader, after as many more waits as fit
    in its bound (half a second here: ten) for a writer."""
    renames, settle = bucket.renames(0.5), Settlements()
    monkeypatch.setattr(renames, "_settle", settle)

    with pytest.raises(AppError) as raised:
        if wait:
            await renames.settled(CHAI, mark(1), wait=True)
        else:
            await renames.settled(CHAI, mark(1))

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "unavailable"
    steps = SETTLE_STEPS + (round(0.5 / WAIT_SECONDS) if wait else 0)
    assert settle.met == [(CHAI, str(n), wait) for n in range(1, steps + 1)]


@pytest.mark.parametrize("last", [None, {"name": "m", "generation": "9"}])
async def test_a_mark_settled_at_the_last_step_is_the_answer(
    bucket: Bucket, monkeypatch: pytest.MonkeyPatch, last: ObjectResource | None
) -> None:
    """The last of a reader's steps settles the mark: nothing there, or a file."""
    renames = bucket.renames(0.5)
    settle = Settlements(at=SETTLE_STEPS, last=last)
    monkeypatch.setattr(renames, "_settle", settle)

    assert await renames.settled(CHAI, mark(1)) == last
    assert len(settle.met) == SETTLE_STEPS
