"""What only the GCS change log does (docs/changes.md): claims before mutations.

A writer that crashed after claiming its number holds later entries back
until a reader settles its claim (void when its mutation never landed,
landed when it did); a file's versions appear in the order they landed even
when a writer's claim is older than the version it replaces; a purge's scrub
restarts the numbering past every old cursor, so such a cursor is expired.
"""

import asyncio
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from datetime import timedelta

import aiohttp
import pytest
from tenchi.errors import AppError

from app.features.changes.domain import follows, page_end
from app.features.memory.ports import HistoryRetention, Write
from app.infra.gcs.change_log import LOG, SEPARATOR, GcsChangeLog, seq_of
from app.infra.gcs.client import GcsClient
from app.infra.gcs.history import GcsHistory, change_map
from app.infra.gcs.location import parse_gcs_url
from app.infra.gcs.logged_writes import LoggedWrite
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.resources import ObjectResource
from app.infra.gcs.storage import GcsStorage
from app.shared.errors import backend_unavailable
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.storage_history_conformance import META, NOW, change

ENTITY = "user/alice/"
TEA, COFFEE = "user/alice/notes/tea.md", "user/alice/notes/coffee.md"
LATER = NOW + timedelta(minutes=1)


@dataclass
class Bucket:
    storage: GcsStorage
    objects: GcsObjects
    prefix: str
    waiting: GcsChangeLog
    """A reader that leaves every pending claim alone."""
    settling: GcsChangeLog
    """A reader for whom every pending claim is past the bound."""
    other: GcsStorage
    """A second process's adapter on the same objects."""


@pytest.fixture
async def bucket(gcs_emulator: GcsEmulator) -> AsyncGenerator[Bucket]:
    url = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?timeout=5&attempts=2"
    location = parse_gcs_url(url)
    async with aiohttp.ClientSession() as session:
        client = GcsClient(session=session)
        objects = GcsObjects(client, location)
        history = GcsHistory(objects, location.prefix, HistoryRetention())

        def log(pending: float) -> GcsChangeLog:
            return GcsChangeLog(
                objects,
                location.prefix,
                timedelta(days=7),
                archive_prefix=history.key_prefix,
                pending_seconds=pending,
            )

        storage = GcsStorage(client, location)
        other = GcsStorage(client, location)
        yield Bucket(storage, objects, location.prefix, log(3600), log(0), other)


async def write(bucket: Bucket, key: str, data: bytes = b"x") -> str:
    return await bucket.storage.put(Write(key, data, META, change("write_file")))


async def test_a_claim_whose_write_never_happened_holds_later_entries_then_voids(
    bucket: Bucket,
) -> None:
    await write(bucket, TEA)
    start = (await bucket.waiting.page(ENTITY, 0, LATER, 100)).last
    crashed = await bucket.waiting.claim(COFFEE, change("write_file"))
    later = await write(bucket, TEA, b"y")
    held = await bucket.waiting.page(ENTITY, start, LATER, 100)
    assert held.changes == [] and held.last == start
    settled = await bucket.settling.page(ENTITY, start, LATER, 100)
    assert [(e.key, e.version) for e in settled.changes] == [(TEA, later)]
    assert settled.voided == (crashed.seq,) == (start + 1,)
    assert follows(settled, start) and page_end(settled, start) == start + 2
    # The settlement is stored: every reader now agrees.
    assert await bucket.waiting.page(ENTITY, start, LATER, 100) == settled


async def test_a_claim_whose_write_landed_unsettled_is_settled_landed(
    bucket: Bucket,
) -> None:
    claim = await bucket.waiting.claim(COFFEE, change("write_file"))
    values = change_map(META, change("write_file")) | claim.stamp()
    version = await bucket.objects.upload(bucket.prefix + COFFEE, b"c", values, "0")
    assert version is not None
    assert (await bucket.waiting.page(ENTITY, 0, LATER, 100)).changes == []
    page = await bucket.settling.page(ENTITY, 0, LATER, 100)
    assert [(e.seq, e.key, e.version) for e in page.changes] == [
        (claim.seq, COFFEE, version)
    ]


async def test_a_write_claimed_before_the_version_it_replaces_claims_again(
    bucket: Bucket,
) -> None:
    slow = LoggedWrite(bucket.waiting, TEA, change("append_line"))
    await slow.stamp(None)  # claimed, then overtaken by another writer
    first = await write(bucket, TEA)
    current = await bucket.objects.describe(bucket.prefix + TEA)
    assert current is not None
    values = change_map(META, change("append_line")) | await slow.stamp(current)
    second = await bucket.objects.upload(bucket.prefix + TEA, b"z", values, first)
    await slow.end(second)
    page = await bucket.waiting.page(ENTITY, 0, LATER, 100)
    assert [e.version for e in page.changes] == [first, second]
    assert len(page.voided) == 1 and page.voided[0] < page.changes[0].seq


async def test_after_a_scrub_numbers_restart_past_every_old_cursor(
    bucket: Bucket,
) -> None:
    for key in (TEA, COFFEE):
        await write(bucket, key)
    old = (await bucket.waiting.page(ENTITY, 0, LATER, 100)).last
    await bucket.storage.scrub(ENTITY)
    await write(bucket, TEA)
    page = await bucket.waiting.page(ENTITY, old, LATER, 100)
    assert not follows(page, old)
    fresh = await bucket.waiting.page(ENTITY, 0, LATER, 100)
    assert [e.key for e in fresh.changes] == [TEA] and fresh.last > old + 1


async def test_a_writer_whose_last_entry_another_process_scrubbed_starts_afresh(
    bucket: Bucket,
) -> None:
    """The writer remembers its last number; once another process's purge
    scrubbed the log, its next write starts past every old cursor instead."""
    await write(bucket, TEA)
    old = (await bucket.waiting.page(ENTITY, 0, LATER, 100)).last
    await bucket.other.scrub(ENTITY)
    version = await write(bucket, COFFEE)
    page = await bucket.waiting.page(ENTITY, 0, LATER, 100)
    assert [(e.key, e.version) for e in page.changes] == [(COFFEE, version)]
    assert page.changes[0].seq > old + 1


async def test_a_claim_that_finds_no_number_above_the_replaced_one_gives_up(
    bucket: Bucket,
) -> None:
    """Every number offered is at or below ``above``: after its attempts the
    claim is unavailable and has claimed nothing, never out of order."""
    await write(bucket, TEA)
    before = await bucket.waiting.page(ENTITY, 0, LATER, 100)

    with pytest.raises(AppError) as raised:
        await bucket.waiting.claim(COFFEE, change("write_file"), above=10**30)

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "unavailable"
    assert await bucket.waiting.page(ENTITY, 0, LATER, 100) == before


async def test_a_claim_whose_answer_was_lost_keeps_its_number(
    bucket: Bucket, gcs_emulator: GcsEmulator
) -> None:
    """The claim's creation landed unanswered and its retry met its own
    object: read back with this claim's values, the number is this claim's
    (an empty object), not given up for the next one."""
    await write(bucket, TEA)
    expected = (await bucket.waiting.page(ENTITY, 0, LATER, 100)).last + 1
    lost = gcs_emulator.proxy.lost
    gcs_emulator.proxy.lose_answer(f"{expected:019d}")
    try:
        claim = await bucket.waiting.claim(COFFEE, change("write_file"))
    finally:
        gcs_emulator.proxy.lose_answer(None)

    assert gcs_emulator.proxy.lost == lost + 1  # the answer really was lost
    assert claim.seq == expected
    name = f"{bucket.prefix}{LOG}{ENTITY}{SEPARATOR}{expected:019d}"
    stored = await bucket.objects.describe(name)
    assert stored is not None and stored.get("size") == "0"


async def test_a_claim_whose_write_landed_and_was_replaced_is_settled_landed(
    bucket: Bucket,
) -> None:
    """The stale claim's write id is found in the key's archive when a later write
    replaced it: settled landed with the version it wrote, before the later one."""
    claim = await bucket.waiting.claim(COFFEE, change("write_file"))
    values = change_map(META, change("write_file")) | claim.stamp()
    version = await bucket.objects.upload(bucket.prefix + COFFEE, b"c", values, "0")
    assert version is not None
    later = await write(bucket, COFFEE, b"d")
    page = await bucket.settling.page(ENTITY, 0, LATER, 100)
    assert [(e.key, e.version) for e in page.changes] == [
        (COFFEE, version),
        (COFFEE, later),
    ]
    assert page.changes[0].seq == claim.seq and page.voided == ()


async def test_a_scrub_erases_its_entity_log_only(bucket: Bucket) -> None:
    """A purge's scrub erases the log of its entity, not a neighbour's, whose
    entity name starts the same, nor any file."""
    neighbour, theirs = "user/alice2/", "user/alice2/notes/tea.md"
    mine = await write(bucket, TEA)
    kept = await write(bucket, theirs)
    await bucket.storage.scrub(ENTITY)
    page = await bucket.waiting.page(neighbour, 0, LATER, 100)
    assert [(e.key, e.version) for e in page.changes] == [(theirs, kept)]
    assert (await bucket.waiting.page(ENTITY, 0, LATER, 100)).changes == []
    assert await bucket.objects.describe(bucket.prefix + theirs) is not None
    assert mine


async def test_readers_settling_one_stale_claim_at_once_agree(bucket: Bucket) -> None:
    """Two readers settle the same stale claim together: one settlement is made,
    and the reader whose creation lost reads it back instead of stopping."""
    claim = await bucket.waiting.claim(COFFEE, change("write_file"))
    values = change_map(META, change("write_file")) | claim.stamp()
    version = await bucket.objects.upload(bucket.prefix + COFFEE, b"c", values, "0")
    other = GcsChangeLog(
        bucket.objects,
        bucket.prefix,
        timedelta(days=7),
        archive_prefix=lambda key: key,
        pending_seconds=0,
    )
    pages = await asyncio.gather(
        bucket.settling.page(ENTITY, 0, LATER, 100),
        other.page(ENTITY, 0, LATER, 100),
    )
    assert [[(e.seq, e.version) for e in page.changes] for page in pages] == [
        [(claim.seq, version)],
        [(claim.seq, version)],
    ]


@pytest.mark.parametrize(
    ("resource", "seq"),
    [
        pytest.param(None, 0, id="absent"),
        pytest.param({"name": "k", "generation": "1"}, 0, id="no-metadata"),
        pytest.param(
            {"name": "k", "generation": "1", "metadata": {"write": "w"}},
            0,
            id="written-before-the-log",
        ),
        pytest.param(
            {"name": "k", "generation": "1", "metadata": {"seq": "x1"}}, 0, id="junk"
        ),
        pytest.param(
            {"name": "k", "generation": "1", "metadata": {"seq": "0000042"}},
            42,
            id="numbered",
        ),
    ],
)
def test_a_version_without_a_number_counts_as_zero(
    resource: ObjectResource | None, seq: int
) -> None:
    """A replaced version written before the change log existed carries no
    ``seq``: a new claim need only be above 0."""
    assert seq_of(resource) == seq


async def test_a_settlement_that_fails_is_left_to_readers(
    bucket: Bucket, gcs_emulator: GcsEmulator
) -> None:
    """The write is over when it settles: a backend gone meanwhile is not its
    caller's failure, and the claim stays pending for readers to settle."""
    claim = await bucket.waiting.claim(COFFEE, change("write_file"))
    with gcs_emulator.unreachable():
        await bucket.waiting.settle(claim, "1", LATER)
    page = await bucket.waiting.page(ENTITY, 0, LATER, 100)
    assert page.changes == [] and page.last == 0


async def test_a_landed_write_prunes_the_entries_past_the_retention_before_it(
    bucket: Bucket,
) -> None:
    """Settled landed a month later (retention 7 days), a write erases the
    older entries and their settlements, at most PRUNE_PER_WRITE (8) of them
    from the oldest: the ninth stays, and so do its own and the log's start.
    A neighbour's log, listed before this one, is not this log's to prune."""
    await write(bucket, "user/aaa/notes/tea.md")
    for _ in range(9):
        await write(bucket, TEA)
    ninth = (await bucket.waiting.page(ENTITY, 0, LATER, 100)).last
    claim = await bucket.waiting.claim(TEA, change("write_file"))
    await bucket.waiting.settle(claim, "1", NOW + timedelta(days=30))
    directory = f"{bucket.prefix}{LOG}{ENTITY}{SEPARATOR}"
    listing = bucket.objects.items({"prefix": directory})
    names = [str(item["name"])[len(directory) :] async for item in listing]
    kept, own = f"{ninth:019d}", f"{claim.seq:019d}"
    assert names == [kept, kept + "+", own, own + "+", "start"]


async def test_a_create_claimed_before_a_delete_it_follows_claims_again(
    bucket: Bucket,
) -> None:
    """A create claimed while the key was absent, then overtaken by another
    writer's create and delete: it claims above the archived version's number,
    so the feed shows create, delete, create in the order they landed."""
    slow = LoggedWrite(bucket.waiting, TEA, change("write_file"))
    await slow.stamp(None)
    first = await write(bucket, TEA)
    assert await bucket.storage.delete_if_version(
        TEA, first, change=change("delete_file")
    )
    values = change_map(META, change("write_file")) | await slow.stamp(None)
    second = await bucket.objects.upload(bucket.prefix + TEA, b"z", values, "0")
    await slow.end(second)
    page = await bucket.waiting.page(ENTITY, 0, LATER, 100)
    assert [e.operation for e in page.changes] == [
        "write_file",
        "delete_file",
        "write_file",
    ]
    assert page.changes[0].version == first and page.changes[-1].version == second
