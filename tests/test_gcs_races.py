"""GCS operations that lose their object to another writer between two requests.

A rival write is run at one chosen request of the operation under test (an
aiohttp trace hook, called before the request is sent), so the race is the
same every run: the rival lands first, and the operation must notice.
"""

import asyncio
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace
from urllib.parse import quote, unquote, urlsplit

import aiohttp
import pytest
from tenchi.errors import AppError

from app.features.memory.ports import HistoryRetention, VersionRecord, Write
from app.infra.gcs.change_log import START, GcsChangeLog
from app.infra.gcs.client import GcsClient
from app.infra.gcs.history import RENAMING, GcsHistory
from app.infra.gcs.location import GcsLocation, parse_gcs_url
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.outcomes import CHECK_SECONDS
from app.infra.gcs.storage import GcsStorage, open_gcs_storage
from app.shared.errors import backend_unavailable
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.storage_history_conformance import META, NOW, change, history

KEY = "user/alice/notes/tea.md"
OTHER = "user/alice/projects/chai.md"

type Rival = Callable[[], Awaitable[None]]
type Chooser = Callable[[str, str], bool]


def is_download(method: str, url: str) -> bool:
    """A read of an object's body (pinned to a generation)."""
    return method == "GET" and "alt=media" in url


def is_delete(method: str, url: str) -> bool:
    return method == "DELETE"


def is_upload(method: str, url: str) -> bool:
    """An upload: a write, a tombstone, an archived record."""
    return method == "POST" and "/upload/" in url


def is_listing(method: str, url: str) -> bool:
    """A listing of a prefix's objects."""
    return method == "GET" and url.split("?")[0].endswith("/o")


def lists_archive(method: str, url: str) -> bool:
    """A listing of archived records (a prune's, say)."""
    return method == "GET" and "history" in unquote(urlsplit(url).query)


def marked(racing: "Racing", key: str) -> bool:
    """Whether ``key``'s object is a rename's marked destination (read directly)."""
    name = quote(racing.prefix + key, safe="")
    url = f"{racing.emulator.url}/storage/v1/b/{TEST_BUCKET}/o/{name}"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return RENAMING in (json.loads(response.read()).get("metadata") or {})
    except urllib.error.HTTPError:
        return False


class Race:
    """Runs ``rival`` before each of the first ``times`` requests ``chooses`` picks."""

    def __init__(self) -> None:
        self.rival: Rival | None = None
        self.chooses: Chooser = is_download
        self.times = 1
        self.ran = 0

    async def before(
        self,
        session: aiohttp.ClientSession,
        context: SimpleNamespace,
        params: aiohttp.TraceRequestStartParams,
    ) -> None:
        method, url = params.method, str(params.url)
        if self.rival and self.ran < self.times and self.chooses(method, url):
            self.ran += 1
            await self.rival()


@dataclass
class Racing:
    storage: GcsStorage
    """The storage under test, its requests traced."""
    rival: GcsStorage
    """Another process's adapter on the same prefix."""
    race: Race
    settling: GcsChangeLog
    """A reader of the change log for whom every pending claim is past its bound."""
    emulator: GcsEmulator
    prefix: str
    client: GcsClient
    """The traced client, for a storage of other settings on the same prefix."""


def settling_log(objects: GcsObjects, location: GcsLocation) -> GcsChangeLog:
    """A change log that settles every unanswered claim it meets at once."""
    history = GcsHistory(objects, location.prefix, HistoryRetention())
    return GcsChangeLog(
        objects,
        location.prefix,
        timedelta(days=7),
        archive_prefix=history.key_prefix,
        pending_seconds=0,
    )


@pytest.fixture
async def racing(gcs_emulator: GcsEmulator) -> AsyncGenerator[Racing]:
    url = f"gcs://{TEST_BUCKET}/t-{uuid.uuid4().hex}?timeout=5&attempts=3"
    location = parse_gcs_url(url)
    race = Race()
    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(race.before)
    async with (
        aiohttp.ClientSession(trace_configs=[trace]) as session,
        open_gcs_storage(url) as rival,
    ):
        client = GcsClient(session=session)
        settling = settling_log(GcsObjects(client, location), location)
        storage = GcsStorage(client, location)
        prefix = location.prefix
        yield Racing(storage, rival, race, settling, gcs_emulator, prefix, client)


@asynccontextmanager
async def rival_at(
    race: Race, chooses: Chooser, rival: Rival, times: int = 1
) -> AsyncGenerator[None]:
    race.rival, race.chooses, race.times, race.ran = rival, chooses, times, 0
    yield
    race.rival = None
    assert race.ran == times, "the rival ran fewer times than staged"


async def listed_during[T](race: Race, call: Awaitable[T]) -> tuple[T, bool]:
    """``call``'s answer, and whether it sent a listing on its way."""

    async def unmoved() -> None:
        return None

    race.rival, race.chooses, race.times, race.ran = unmoved, is_listing, 1, 0
    try:
        answer = await call
    finally:
        race.rival = None
    return answer, race.ran > 0


async def test_a_delete_that_finds_its_version_replaced_while_archiving_fails(
    racing: Racing,
) -> None:
    """The body of the version read is gone when the delete archives it."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    write = Write(KEY, b"one\n", META, change=change("write_file"))
    version = await storage.put_if_version(write, None)
    assert version is not None
    replaced: list[str | None] = []

    async def replace() -> None:
        later = Write(KEY, b"two\n", META, change=change("append_line"))
        replaced.append(await rival.put_if_version(later, version))

    async with rival_at(race, is_download, replace):
        deleted = await storage.delete_if_version(
            KEY, version, change=change("delete_file")
        )

    stored = await storage.get(KEY)
    assert not deleted
    assert stored is not None and (stored.data, stored.version) == (
        b"two\n",
        replaced[0],
    )


async def test_an_erase_that_loses_its_object_to_a_write_fails(
    racing: Racing,
) -> None:
    """The purge's tombstone meets a newer generation: nothing is erased."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    version = await storage.put(Write(KEY, b"one\n", META))
    replaced: list[str | None] = []

    async def replace() -> None:
        replaced.append(await rival.put_if_version(Write(KEY, b"two\n", META), version))

    async with rival_at(race, is_upload, replace):
        erased = await storage.erase_if_version(KEY, version)

    stored = await storage.get(KEY)
    assert not erased
    assert stored is not None and (stored.data, stored.version) == (
        b"two\n",
        replaced[0],
    )


async def test_a_delete_whose_settlement_is_lost_is_settled_landed_by_a_reader(
    racing: Racing, gcs_emulator: GcsEmulator
) -> None:
    """The backend goes away once the tombstone's record is archived: the
    delete has landed, and a reader settles its claim from the write id that
    record carries, so the feed shows the delete."""
    storage, race, proxy = racing.storage, racing.race, gcs_emulator.proxy
    write = Write(KEY, b"one\n", META, change=change("write_file"))
    version = await storage.put_if_version(write, None)
    assert version is not None

    async def cut() -> None:
        proxy.interrupt()

    try:
        async with rival_at(race, is_delete, cut):
            deleted = await storage.delete_if_version(
                KEY, version, change=change("delete_file")
            )
    finally:
        proxy.resume()

    page = await racing.settling.page("user/alice/", 0, NOW + timedelta(minutes=1), 9)
    assert deleted
    assert [c.operation for c in page.changes] == ["write_file", "delete_file"]


async def test_a_read_whose_version_is_replaced_before_its_body_reads_again(
    racing: Racing,
) -> None:
    storage, rival, race = racing.storage, racing.rival, racing.race
    await storage.put(Write(KEY, b"one\n", META))
    newer: list[str] = []

    async def replace() -> None:
        newer.append(await rival.put(Write(KEY, b"two\n", META)))

    async with rival_at(race, is_download, replace):
        stored = await storage.get(KEY)

    assert stored is not None and (stored.data, stored.version) == (b"two\n", newer[0])


async def test_a_read_of_an_object_that_keeps_changing_gives_up_after_three(
    racing: Racing, caplog: pytest.LogCaptureFixture
) -> None:
    """Each of three readings finds its version replaced: BACKEND_UNAVAILABLE,
    and the operator is told why."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    await storage.put(Write(KEY, b"0", META))
    count = iter(range(1, 10))

    async def replace() -> None:
        await rival.put(Write(KEY, str(next(count)).encode(), META))

    with pytest.raises(AppError) as raised:
        async with rival_at(race, is_download, replace, times=3):
            await storage.get(KEY)

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "unavailable"
    assert "GCS object kept changing while being read" in caplog.messages
    stored = await storage.get(KEY)
    assert stored is not None and stored.data == b"3"


async def test_a_write_that_loses_every_attempt_gives_up_after_five(
    racing: Racing,
) -> None:
    """Each of five attempts finds the version it read replaced before it
    archives it: BACKEND_UNAVAILABLE, the object is the rival's last write, and
    the records the rival archived keep their data."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    first = await rival.put(Write(KEY, b"0", META, change=change("write_file")))
    count = iter(range(1, 10))

    async def replace() -> None:
        data = str(next(count)).encode()
        await rival.put(Write(KEY, data, META, change=change("append_line")))

    with pytest.raises(AppError) as raised:
        async with rival_at(race, is_download, replace, times=5):
            await storage.put(Write(KEY, b"mine", META))

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "unavailable"
    stored = await storage.get(KEY)
    assert stored is not None and stored.data == b"5"
    kept = await storage.get_version(KEY, first)  # archived by the rival alone
    assert kept is not None and kept.data == b"0"


async def test_a_write_meeting_a_young_rename_mark_waits_for_the_rename(
    racing: Racing,
) -> None:
    """An unconditional put to a rename's destination, made while the rename's
    mark stands (its commit held back two seconds), waits for the rename to
    settle instead of failing on the marked object, then replaces it."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    writes: list[asyncio.Task[str]] = []

    async def write_then_hold_the_commit() -> None:
        later = Write(chai, b"mine\n", META, change("write_file"))
        writes.append(asyncio.create_task(rival.put(later)))
        await asyncio.sleep(2)

    def is_commit(method: str, url: str) -> bool:
        return is_upload(method, url) and marked(racing, chai)

    async with rival_at(race, is_commit, write_then_hold_the_commit):
        renamed = await storage.rename_if_version(
            KEY, chai, first, replacing=None, change=change("rename_file")
        )
    written = await writes[0]

    there = await storage.get(chai)
    assert renamed is not None and written != renamed
    assert there is not None and (there.data, there.version) == (b"mine\n", written)
    assert await storage.get(KEY) is None


async def test_a_create_over_a_tombstone_left_behind_keeps_the_delete_empty(
    racing: Racing, gcs_emulator: GcsEmulator
) -> None:
    """The backend goes away before a delete removes its tombstone; the next
    create replaces the tombstone, archiving its record again: still no data."""
    storage, race, proxy = racing.storage, racing.race, gcs_emulator.proxy
    version = await storage.put(Write(KEY, b"one\n", META, change("write_file")))

    async def cut() -> None:
        proxy.interrupt()

    try:
        async with rival_at(race, is_delete, cut):
            assert await storage.delete_if_version(
                KEY, version, change=change("delete_file")
            )
    finally:
        proxy.resume()
    left = [(r.deleted, r.size) for r in await history(storage)]
    standing = (await history(storage))[0]
    current = await storage.get_version(KEY, standing.version)
    assert current is not None and current.deleted and current.data == b""
    again = Write(KEY, b"two\n", META, change("write_file"))
    created = await storage.put_if_version(again, None)

    records = [(r.deleted, r.size) for r in await history(storage)]
    tomb = [r for r in await history(storage) if r.deleted]
    found = await storage.get_version(KEY, tomb[0].version)
    assert left == [(True, 0), (False, 4)]  # the tombstone left holds nothing
    assert created is not None
    assert records == [(False, 4), (True, 0), (False, 4)]
    assert found is not None and found.data == b""


async def test_a_create_meeting_a_young_rename_mark_that_rolls_back_lands(
    racing: Racing,
) -> None:
    """A create of a rename's destination, made while the rename's mark stands,
    waits; the source then changes, so the rename cannot commit and its mark
    goes: the create lands instead of giving up on the marked object."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    creates: list[asyncio.Task[str | None]] = []

    async def create_then_change_the_source() -> None:
        mine = Write(chai, b"mine\n", META, change("write_file"))
        creates.append(asyncio.create_task(rival.put_if_version(mine, None)))
        await asyncio.sleep(1)
        await rival.put(Write(KEY, b"changed\n", META, change("append_line")))

    def is_commit(method: str, url: str) -> bool:
        return is_upload(method, url) and marked(racing, chai)

    async with rival_at(race, is_commit, create_then_change_the_source):
        renamed = await storage.rename_if_version(
            KEY, chai, first, replacing=None, change=change("rename_file")
        )
    created = await creates[0]

    there, source = await storage.get(chai), await storage.get(KEY)
    assert renamed is None and created is not None
    assert there is not None and (there.data, there.version) == (b"mine\n", created)
    assert source is not None and source.data == b"changed\n"


async def test_a_claim_unanswered_while_another_writer_takes_its_number_takes_the_next(
    racing: Racing,
) -> None:
    """A create's claim goes unanswered (the connection drops before the request
    is sent, so it never lands) and another process's write takes that number
    before the retry, which then finds the name taken: the claim reads the entry
    back, sees the other writer's, and takes the next number."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai = "user/alice/projects/chai.md"
    await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    taken: list[str] = []

    async def drop_then_take() -> None:
        if not taken:
            taken.append("dropped")
            raise aiohttp.ServerDisconnectedError()
        taken.append(
            await rival.put(Write(chai, b"theirs\n", META, change("write_file")))
        )

    async with rival_at(race, is_upload, drop_then_take, times=2):
        mine = Write(
            "user/alice/notes/coffee.md", b"mine\n", META, change("write_file")
        )
        created = await storage.put_if_version(mine, None)

    page = await racing.settling.page("user/alice/", 0, NOW + timedelta(minutes=1), 9)
    assert created is not None
    assert [(c.key, c.version) for c in page.changes] == [
        (KEY, page.changes[0].version),
        (chai, taken[1]),
        ("user/alice/notes/coffee.md", created),
    ]
    assert page.voided == ()


async def test_a_log_start_scrubbed_before_it_is_read_back_starts_at_its_own_number(
    racing: Racing,
) -> None:
    """Another process starts the entity's log just before this writer creates
    the start object, and a purge's scrub erases it before this writer reads it
    back: the writer starts the log at its own number instead of failing."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    ran: list[str] = []

    def is_start(method: str, url: str) -> bool:
        reads_start = method == "GET" and urlsplit(url).path.endswith(START)
        return is_upload(method, url) or reads_start

    async def start_then_scrub() -> None:
        if not ran:
            ran.append(
                await rival.put(Write(KEY, b"one\n", META, change("write_file")))
            )
        else:
            await rival.scrub("user/alice/")

    async with rival_at(race, is_start, start_then_scrub, times=2):
        mine = Write(
            "user/alice/notes/coffee.md", b"mine\n", META, change("write_file")
        )
        created = await storage.put_if_version(mine, None)

    page = await racing.settling.page("user/alice/", 0, NOW + timedelta(minutes=1), 9)
    assert created is not None
    assert [(c.key, c.version) for c in page.changes] == [
        ("user/alice/notes/coffee.md", created)
    ]


async def test_a_settlement_cancelled_on_its_way_leaves_the_write_cancelled(
    racing: Racing,
) -> None:
    """The caller goes away (its task cancelled) as the write settles its entry:
    the settlement ends cancelled, not in another error (whether its request
    went out first or not, a reader settles what is left)."""
    race, log = racing.race, racing.settling
    claim = await log.claim(KEY, change("write_file"))

    async def cancel() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()

    async with rival_at(race, is_upload, cancel):
        settling = asyncio.create_task(log.settle(claim, "1", NOW))
        with pytest.raises(asyncio.CancelledError):
            await settling

    assert settling.cancelled()


async def test_a_replica_with_a_shorter_bound_never_undoes_a_rename_about_to_commit(
    racing: Racing,
) -> None:
    """Another replica, whose own bound for a mark is shorter (a shorter request
    deadline), reads the destination just before the rename commits: the mark
    is young by the bound of the replica that wrote it, so it stays, and the
    rename lands whole instead of deleting the source's file."""
    storage, race = racing.storage, racing.race
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    location = parse_gcs_url(f"gcs://{TEST_BUCKET}/{racing.prefix}")
    seen: list[object] = []

    def is_commit(method: str, url: str) -> bool:
        return is_upload(method, url) and marked(racing, chai)

    async with aiohttp.ClientSession() as session:
        hasty = GcsStorage(GcsClient(session=session), location, pending_seconds=0)

        async def read_the_destination() -> None:
            seen.append(await hasty.get(chai))

        async with rival_at(race, is_commit, read_the_destination):
            renamed = await storage.rename_if_version(
                KEY, chai, first, replacing=None, change=change("rename_file")
            )

    there, source = await storage.get(chai), await storage.get(KEY)
    assert seen == [None]
    assert renamed is not None and source is None
    assert there is not None and (there.data, there.version) == (b"one\n", renamed)


async def test_a_create_landing_on_a_deletes_tombstone_is_kept(
    racing: Racing,
) -> None:
    """Another writer creates the file over the delete's tombstone before the
    delete removes it: the removal is guarded by the tombstone's generation,
    so the new file stays (the delete itself has landed)."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    version = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    created: list[str | None] = []

    async def create() -> None:
        again = Write(KEY, b"two\n", META, change=change("write_file"))
        created.append(await rival.put_if_version(again, None))

    async with rival_at(race, is_delete, create):
        deleted = await storage.delete_if_version(
            KEY, version, change=change("delete_file")
        )

    stored = await storage.get(KEY)
    assert deleted and created[0] is not None
    assert stored is not None and (stored.data, stored.version) == (
        b"two\n",
        created[0],
    )


async def test_a_prune_that_finds_its_own_version_archived_counts_it_once(
    racing: Racing,
) -> None:
    """Another process's unrecorded write (it has no record and prunes
    nothing) replaces and archives this write's version before this write
    prunes: that record, the newest, counts once, so a retention of two
    records drops only the oldest."""
    race, rival = racing.race, racing.rival
    location = parse_gcs_url(f"gcs://{TEST_BUCKET}/{racing.prefix}")
    keep_two = HistoryRetention(max_versions=2, max_days=0)
    storage = GcsStorage(racing.client, location, retention=keep_two)
    first = await storage.put(Write(KEY, b"1", META, change("write_file")))
    second = await storage.put_if_version(
        Write(KEY, b"2", META, change("append_line")), first
    )
    assert second is not None
    replaced: list[str] = []

    async def replace() -> None:
        replaced.append(await rival.put(Write(KEY, b"4", META)))

    async with rival_at(race, lists_archive, replace):
        third = await storage.put_if_version(
            Write(KEY, b"3", META, change("append_line")), second
        )

    stored = await storage.get(KEY)
    assert stored is not None and stored.version == replaced[0]  # unrecorded
    assert [r.version for r in await history(storage)] == [third, second]


async def test_a_write_whose_prune_fails_has_still_landed(racing: Racing) -> None:
    """Retention never fails a write: a prune whose listing of the archive
    fails every attempt is given up, and the write answers the version it
    landed at."""
    storage = racing.storage
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None

    async def disconnect() -> None:
        raise aiohttp.ServerDisconnectedError()

    async with rival_at(racing.race, lists_archive, disconnect, times=3):
        second = await storage.put_if_version(
            Write(KEY, b"two\n", META, change=change("append_line")), first
        )

    stored = await storage.get(KEY)
    assert second is not None and stored is not None and stored.version == second
    assert [r.version for r in await history(storage)] == [second, first]


async def test_a_version_read_whose_record_keeps_changing_gives_up_after_two(
    racing: Racing,
) -> None:
    """An archived record is written again (a lost answer's retry, say) before
    each of two readings of its body: get_version answers None, not a record
    it could not read (the port's None: no record to give)."""
    storage, race = racing.storage, racing.race
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None
    again = Write(KEY, b"two\n", META, change=change("append_line"))
    assert await storage.put_if_version(again, first) is not None
    location = parse_gcs_url(f"gcs://{TEST_BUCKET}/{racing.prefix}")
    async with aiohttp.ClientSession() as session:
        objects = GcsObjects(GcsClient(session=session), location)
        name = GcsHistory(objects, racing.prefix, HistoryRetention()).order_name(
            KEY, int(first)
        )

        async def rewrite() -> None:
            found = await objects.describe(name)
            assert found is not None
            data = await objects.download(name, str(found["generation"]))
            assert data is not None
            await objects.upload(name, data, found.get("metadata") or {}, None)

        async with rival_at(race, is_download, rewrite, times=2):
            assert await storage.get_version(KEY, first) is None
    record = await storage.get_version(KEY, first)
    assert record is not None and record.data == b"one\n"


async def test_a_version_read_by_its_archived_name_lists_nothing(
    racing: Racing,
) -> None:
    """An archived record is found by the name its version gives, one read;
    listing the key's archive is only for records a rename renumbered."""
    storage, race = racing.storage, racing.race
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None
    again = Write(KEY, b"two\n", META, change=change("append_line"))
    assert await storage.put_if_version(again, first) is not None
    record, listed = await listed_during(race, storage.get_version(KEY, first))

    assert record is not None and record.data == b"one\n"
    assert not listed


async def test_a_moved_record_read_by_its_version_lists_nothing(
    racing: Racing,
) -> None:
    """A rename onto a key with no records of its own keeps each moved
    record's place, so its version still names it: one read, no listing."""
    storage, race = racing.storage, racing.race
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None
    moved = await storage.rename_if_version(
        KEY, OTHER, first, replacing=None, change=change("rename_file")
    )
    assert moved is not None
    record, listed = await listed_during(race, storage.get_version(OTHER, first))

    assert record is not None and record.data == b"one\n"
    assert not listed


@pytest.mark.parametrize("replaced", [False, True])
@pytest.mark.parametrize("at", ["download", "upload"])
async def test_a_rename_another_reader_finished_answers_the_version_it_landed_at(
    racing: Racing, replaced: bool, at: str
) -> None:
    """Another process reads the destination between the rename's commit and
    its roll forward (before it reads the marked body, or after), and finishes
    the rename itself: the rename answers the version that reader left, not a
    failure, and leaves it; never the version of a write that replaced it
    since (then it may answer None: its call finds its own change)."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    seen: list[str | None] = []
    read: list[str] = []

    def is_forward(method: str, url: str) -> bool:
        if is_download(method, url) and "chai.md" in url:
            read.append(url)
            return at == "download"
        return at == "upload" and bool(read) and is_upload(method, url)

    async def finish_it() -> None:
        found = await rival.get(chai)
        seen.append(None if found is None else found.version)
        if replaced:
            later = Write(chai, b"two\n", META, change("append_line"))
            seen.append(await rival.put(later))

    async with rival_at(race, is_forward, finish_it):
        renamed = await storage.rename_if_version(
            KEY, chai, first, replacing=None, change=change("rename_file")
        )

    there = await storage.get(chai)
    assert seen[0] is not None and renamed == (None if replaced else seen[0])
    assert there is not None and (there.data, there.version) == (
        (b"two\n", seen[1]) if replaced else (b"one\n", seen[0])
    )
    assert not marked(racing, chai) and await storage.get(KEY) is None


@pytest.mark.parametrize("replaced", [False, True])
async def test_a_rename_whose_mark_is_in_doubt_takes_the_mark_back(
    racing: Racing, gcs_emulator: GcsEmulator, replaced: bool
) -> None:
    """The mark lands but its answer is lost, and the check of whether it landed
    runs out of time: the rename fails as an unknown outcome, and takes its
    mark back at once instead of leaving it for readers to find stale; but not
    a file another process created there meanwhile (the source changed, so a
    reader rolled the mark back)."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    proxy = gcs_emulator.proxy
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    lost = proxy.lost
    created: list[str | None] = []

    def is_check(method: str, url: str) -> bool:
        reads = method == "GET" and "alt=media" not in url and "chai.md" in url
        return reads and proxy.lost > lost

    async def stall() -> None:
        if replaced:
            await rival.put(Write(KEY, b"two\n", META, change("append_line")))
            theirs = Write(chai, b"theirs\n", META, change("write_file"))
            created.append(await rival.put_if_version(theirs, None))
        await asyncio.sleep(CHECK_SECONDS + 5)

    proxy.lose_answer("projects/chai.md")
    try:
        async with rival_at(race, is_check, stall):
            with pytest.raises(AppError) as raised:
                await storage.rename_if_version(
                    KEY, chai, first, replacing=None, change=change("rename_file")
                )
    finally:
        proxy.lose_answer(None)

    source, there = await storage.get(KEY), await storage.get(chai)
    assert raised.value.details.get("outcome") == "unknown"
    assert not marked(racing, chai) and source is not None
    if replaced:
        assert created[0] is not None and there is not None
        assert (there.data, there.version) == (b"theirs\n", created[0])
    else:
        assert there is None and source.version == first


async def crashed_rename(racing: Racing, chai: str, version: str) -> None:
    """The rival's rename of KEY to ``chai`` dies once its mark landed."""
    proxy = racing.emulator.proxy
    proxy.lose_answer("projects/chai.md", then_down=True)
    try:
        with pytest.raises(AppError):
            await racing.rival.rename_if_version(
                KEY, chai, version, replacing=None, change=change("rename_file")
            )
    finally:
        proxy.lose_answer(None)
        proxy.answer_again()


async def test_a_roll_back_that_loses_the_mark_to_a_create_deletes_nothing(
    racing: Racing,
) -> None:
    """A reader rolls back a mark whose source moved on; just before its delete
    another process rolls it back too and creates the file: the reader's
    delete, conditioned on the mark's generation, leaves that file."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai = "user/alice/projects/chai.md"
    first = await rival.put(Write(KEY, b"one\n", META, change("write_file")))
    await crashed_rename(racing, chai, first)
    assert marked(racing, chai)
    await rival.put(Write(KEY, b"two\n", META, change("append_line")))
    created: list[str | None] = []

    async def roll_back_and_create() -> None:
        theirs = Write(chai, b"theirs\n", META, change("write_file"))
        created.append(await rival.put_if_version(theirs, None))

    async with rival_at(race, is_delete, roll_back_and_create):
        found = await storage.get(chai)

    there = await storage.get(chai)
    assert created[0] is not None
    assert found is not None and (found.data, found.version) == (
        b"theirs\n",
        created[0],
    )
    assert there is not None and there.version == created[0]


def is_tidy(method: str, url: str) -> bool:
    """The delete of a rename's tombstone on its source (KEY's object)."""
    return is_delete(method, url) and urlsplit(url).path.endswith("tea.md")


async def test_a_rename_tidying_up_after_a_create_at_the_old_path_keeps_that_file(
    racing: Racing,
) -> None:
    """Another process creates a file at the old path (over the commit's
    tombstone) just before the rename removes that tombstone: the removal,
    conditioned on the tombstone's generation, leaves the new file."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    created: list[str | None] = []

    async def create_at_the_old_path() -> None:
        fresh = Write(KEY, b"new\n", META, change("write_file"))
        created.append(await rival.put_if_version(fresh, None))

    async with rival_at(race, is_tidy, create_at_the_old_path):
        renamed = await storage.rename_if_version(
            KEY, chai, first, replacing=None, change=change("rename_file")
        )

    old, moved = await storage.get(KEY), await storage.get(chai)
    assert renamed is not None and created[0] is not None
    assert old is not None and (old.data, old.version) == (b"new\n", created[0])
    assert moved is not None and (moved.data, moved.version) == (b"one\n", renamed)


async def test_a_rename_whose_tidying_up_fails_has_still_landed(
    racing: Racing,
) -> None:
    """The removal of the commit's tombstone fails every attempt: the rename has
    landed all the same (a tombstone left behind is what a delete leaves)."""
    storage, race = racing.storage, racing.race
    chai = "user/alice/projects/chai.md"
    first = await storage.put(Write(KEY, b"one\n", META, change("write_file")))

    async def drop() -> None:
        raise aiohttp.ServerDisconnectedError()

    async with rival_at(race, is_tidy, drop, times=3):
        renamed = await storage.rename_if_version(
            KEY, chai, first, replacing=None, change=change("rename_file")
        )

    moved = await storage.get(chai)
    assert renamed is not None and await storage.get(KEY) is None
    assert moved is not None and (moved.data, moved.version) == (b"one\n", renamed)


async def test_a_reader_meeting_a_purges_tombstone_sees_a_deleted_version_by_purge(
    racing: Racing,
) -> None:
    """Between an erase's tombstone and its removal, the key's history shows
    the tombstone as the newest record: deleted, empty, made by ``purge``."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    version = await storage.put(Write(KEY, b"one\n", META, change("write_file")))
    seen: list[list[VersionRecord]] = []

    async def read() -> None:
        seen.append(await history(rival))

    async with rival_at(race, is_delete, read):
        assert await storage.erase_if_version(KEY, version)

    newest = seen[0][0]
    assert (newest.deleted, newest.size, newest.operation, newest.actor) == (
        True,
        0,
        "purge",
        "purge",
    )
    assert newest.metadata.description == ""


async def test_a_rename_meeting_a_young_mark_at_its_destination_waits_for_it(
    racing: Racing,
) -> None:
    """Another rename's young mark (its writer crashed) stands at the
    destination: the rename waits for it; the other source then changes, so
    the mark can never commit and goes, and the rename lands."""
    storage, rival, race = racing.storage, racing.rival, racing.race
    chai, coffee = "user/alice/projects/chai.md", "user/alice/notes/coffee.md"
    first = await rival.put(Write(KEY, b"one\n", META, change("write_file")))
    mine = await storage.put(Write(coffee, b"mine\n", META, change("write_file")))
    await crashed_rename(racing, chai, first)
    looks: list[str] = []

    def is_look_at_the_source(method: str, url: str) -> bool:
        reads = method == "GET" and "alt=media" not in url
        return reads and urlsplit(url).path.endswith("tea.md")

    async def change_the_source_once_waiting() -> None:
        looks.append("look")
        if len(looks) == 2:
            await rival.put(Write(KEY, b"two\n", META, change("append_line")))

    async with rival_at(race, is_look_at_the_source, change_the_source_once_waiting, 2):
        renamed = await storage.rename_if_version(
            coffee, chai, mine, replacing=None, change=change("rename_file")
        )

    there = await storage.get(chai)
    assert renamed is not None and await storage.get(coffee) is None
    assert there is not None and (there.data, there.version) == (b"mine\n", renamed)


async def test_a_current_version_archived_by_a_write_that_failed_shows_once(
    racing: Racing,
) -> None:
    """A write archives the version it replaces, then fails before replacing
    it: that version stays current with its record archived too, and its
    history shows it once, first, at every page boundary."""
    storage = racing.storage
    first = await storage.put_if_version(
        Write(KEY, b"one\n", META, change=change("write_file")), None
    )
    assert first is not None
    second = await storage.put_if_version(
        Write(KEY, b"two\n", META, change=change("append_line")), first
    )
    assert second is not None
    location = parse_gcs_url(f"gcs://{TEST_BUCKET}/{racing.prefix}")
    objects = GcsObjects(racing.client, location)
    current = await objects.describe(racing.prefix + KEY)
    assert current is not None
    archive = GcsHistory(objects, racing.prefix, HistoryRetention())
    await archive.archive(KEY, current, b"two\n")

    records = await history(storage)
    after_current = await storage.list_versions(KEY, after=second, limit=9)

    assert [r.version for r in records] == [second, first]
    assert [r.version for r in after_current] == [first]


async def test_a_stale_claim_whose_log_is_scrubbed_while_settling_holds_the_page(
    racing: Racing,
) -> None:
    """Another reader settles a stale claim just before this one, whose own
    settlement is then refused, and a purge's scrub erases the log before this
    reader reads that settlement back: nothing is there to read, so the claim
    counts as pending and the page ends before it (no error)."""
    race, log, entity = racing.race, racing.settling, "user/alice/"
    await log.claim(KEY, change("write_file"))  # its write never happens
    location = parse_gcs_url(f"gcs://{TEST_BUCKET}/{racing.prefix}")
    ran: list[str] = []

    def is_settlement(method: str, url: str) -> bool:
        """Its creation (the page's one upload) or its read (``+`` quoted)."""
        return is_upload(method, url) or (method == "GET" and "%2B" in url)

    async with aiohttp.ClientSession() as session:
        other = settling_log(GcsObjects(GcsClient(session=session), location), location)

        async def settle_then_scrub() -> None:
            if not ran:
                settled = await other.page(entity, 0, NOW + timedelta(minutes=1), 9)
                ran.append(f"voided {len(settled.voided)}")
            else:
                await other.scrub(entity)
                ran.append("scrubbed")

        async with rival_at(race, is_settlement, settle_then_scrub, times=2):
            page = await log.page(entity, 0, NOW + timedelta(minutes=1), 9)

    assert ran == ["voided 1", "scrubbed"]
    assert (page.changes, page.last, page.voided) == ([], 0, ())
