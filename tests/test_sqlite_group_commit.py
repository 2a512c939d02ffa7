"""SQLite group commit: writes queued behind a busy connection share one transaction.

Real database files, no mock. To make a batch without timing anything, a test
keeps the write connection's thread busy (``GroupCommit.call``) until every
write of the batch has queued (``batch``), then lets it go: the queued writes must run
as ONE transaction (the group's own counter), each landing or failing on its
own, and a transaction that cannot commit must leave none of them behind.
"""

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncGenerator, Awaitable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import PendingEvent
from app.features.memory.ports import Change, FileMetadata, Write
from app.features.search.domain.text import query_terms
from app.features.search.ports import SearchQuery
from app.infra.sqlite.group_commit import GroupCommit, open_group_commit
from app.infra.sqlite.storage import SqliteStorage
from app.shared.errors import backend_unavailable
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import Opened, fail_commits, opened_database, sql

AT = datetime(2026, 3, 1, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
CHANGE = Change("write_file", "http", AT)
POISON = "user/poison/notes/tea.md"


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncGenerator[Opened]:
    async with opened_database(tmp_path) as found:
        yield found


def key_of(entity: str, name: str = "tea") -> str:
    return f"user/{entity}/notes/{name}.md"


def write(key: str, data: bytes) -> Write:
    return Write(key, data, META, change=CHANGE)


async def create(
    storage: SqliteStorage, key: str, data: bytes, expected: str | None = None
) -> str | None:
    """A guarded write carrying its call's audit event, as a use case makes it."""
    entity = key.split("/")[1]
    event = PendingEvent(lambda: staged_write("tea", entity_id=entity))
    change = Change("write_file", "http", AT, event=event)
    return await storage.put_if_version(Write(key, data, META, change), expected)


async def batch[T](
    group: GroupCommit, writes: Sequence[Awaitable[T]]
) -> list[T | BaseException]:
    """Run ``writes`` as one batch: they queue while the thread is kept busy."""
    started, gate = threading.Event(), threading.Event()

    def hold() -> int:
        started.set()
        return int(gate.wait(timeout=60))

    before = group.transactions
    holding = asyncio.ensure_future(group.call(lambda _: hold()))
    try:
        await asyncio.to_thread(started.wait, 60)
        tasks = [asyncio.ensure_future(w) for w in writes]
        for _ in range(10_000):
            if group.waiting == len(tasks):
                break
            await asyncio.sleep(0)
        assert group.waiting == len(tasks)
    finally:
        gate.set()
        await holding
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert group.transactions == before + 1, "the writes did not share one commit"
    return results


def refused(outcome: object, reason: str = "unavailable") -> bool:
    return (
        isinstance(outcome, AppError)
        and outcome.definition is backend_unavailable
        and outcome.details["reason"] == reason
    )


def staged_versions(database: Path) -> dict[str, str]:
    """entity -> version of every audit event the writes staged."""
    rows = sql(database, "SELECT record, version FROM audit_staged")
    return {json.loads(record)["entity_id"]: version for record, version in rows}


async def visible(storage: SqliteStorage, key: str) -> bytes | None:
    stored = await storage.get(key)
    return None if stored is None else stored.data


async def test_concurrent_guarded_writes_of_one_version_land_exactly_once(
    opened: Opened,
) -> None:
    key = key_of("alice")
    first = await create(opened.storage, key, b"v0")
    assert first is not None

    results = await batch(
        opened.group,
        [create(opened.storage, key, f"v{n}".encode(), first) for n in range(1, 7)],
    )

    winners = [n for n, result in enumerate(results, 1) if isinstance(result, str)]
    assert len(winners) == 1 and results.count(None) == 5
    assert await visible(opened.storage, key) == f"v{winners[0]}".encode()
    history = await opened.storage.list_versions(key, after=None, limit=10)
    assert [record.version for record in history] == [results[winners[0] - 1], first]


async def test_read_modify_write_loops_lose_no_update(opened: Opened) -> None:
    key = key_of("alice", "counter")
    assert await create(opened.storage, key, b"0") is not None

    async def increment() -> None:
        for _ in range(200):
            stored = await opened.storage.get(key)
            assert stored is not None
            data = str(int(stored.data) + 1).encode()
            if await create(opened.storage, key, data, stored.version) is not None:
                return
        raise AssertionError("no increment landed in 200 attempts")

    await asyncio.gather(*(increment() for _ in range(40)))

    assert await visible(opened.storage, key) == b"40"
    history = await opened.storage.list_versions(key, after=None, limit=100)
    assert len(history) == 41


async def test_a_batch_of_writes_to_many_files_lands_every_effect(
    opened: Opened,
) -> None:
    entities = [f"writer{n}" for n in range(6)]
    before = {e: await opened.markers.read(f"user/{e}/") for e in entities}

    async def one(entity: str) -> tuple[str | None, str, str]:
        version = await create(opened.storage, key_of(entity), b"green tea")
        # The write re-marked the entity in its own transaction.
        after_write = await opened.markers.read(f"user/{entity}/")
        return version, after_write, await opened.markers.read(f"user/{entity}/")

    results = await batch(opened.group, [one(e) for e in entities])

    versions: dict[str, str] = {}
    for entity, result in zip(entities, results, strict=True):
        assert isinstance(result, tuple), result
        version, after_write, after_bump = result
        assert version is not None
        versions[entity] = version
        assert after_write == after_bump != before[entity]
        history = await opened.storage.list_versions(
            key_of(entity), after=None, limit=5
        )
        assert [record.version for record in history] == [version]
    assert staged_versions(opened.database) == versions
    assert len(opened.staged) == len(entities)
    query = SearchQuery(["user/"], query_terms("green"), None, 10)
    page = await opened.storage.search_index.search(query)
    assert sorted(hit.key for hit, _ in page.hits) == sorted(map(key_of, entities))


@pytest.mark.parametrize("alone", [True, False], ids=["alone", "in-a-batch"])
async def test_a_write_whose_statement_fails_is_undone_and_fails_alone(
    opened: Opened, alone: bool
) -> None:
    """RAISE(FAIL) keeps what its statement did before it: a savepoint undoes it."""
    sql(
        opened.database,
        "CREATE TRIGGER refuse_poison AFTER INSERT ON memory_objects "
        "WHEN NEW.key LIKE 'user/poison/%' BEGIN SELECT RAISE(FAIL, 'poisoned'); END",
    )
    poison_marker = await opened.markers.read("user/poison/")
    others = [] if alone else [key_of(f"writer{n}") for n in range(4)]
    keys = [*others[:2], POISON, *others[2:]]

    results = await batch(opened.group, [create(opened.storage, k, b"t") for k in keys])

    for key, result in zip(keys, results, strict=True):
        if key == POISON:
            assert refused(result), result
        else:
            assert isinstance(result, str) and await visible(opened.storage, key)
    assert await visible(opened.storage, POISON) is None
    assert await opened.storage.list_versions(POISON, after=None, limit=5) == []
    assert await opened.markers.read("user/poison/") == poison_marker
    assert "poison" not in staged_versions(opened.database)
    assert len(opened.staged) == len(others)


async def test_an_error_that_ends_the_transaction_fails_every_write_of_the_batch(
    opened: Opened,
) -> None:
    sql(
        opened.database,
        "CREATE TRIGGER refuse_poison AFTER INSERT ON memory_objects "
        "WHEN NEW.key LIKE 'user/poison/%' BEGIN SELECT RAISE(ROLLBACK, 'x'); END",
    )
    keys = [key_of("writer1"), POISON, key_of("writer2")]

    results = await batch(opened.group, [create(opened.storage, k, b"t") for k in keys])

    assert all(refused(result) for result in results), results
    await assert_nothing_landed(opened, keys)


async def test_a_commit_that_fails_fails_every_write_and_leaves_none(
    opened: Opened,
) -> None:
    """A deferred foreign key is checked at COMMIT: the whole batch is refused."""
    await fail_commits(opened, "WHEN NEW.key LIKE 'user/poison/%'")
    keys = [key_of("writer1"), key_of("writer2"), POISON, key_of("writer3")]

    results = await batch(opened.group, [create(opened.storage, k, b"t") for k in keys])
    alone = await batch(opened.group, [create(opened.storage, POISON, b"t")])

    assert all(refused(result) for result in [*results, *alone]), results
    await assert_nothing_landed(opened, keys)
    assert sql(opened.database, "SELECT count(*) FROM child") == [(0,)]
    # The connection is out of the failed transaction: the next batch commits.
    again = await batch(opened.group, [create(opened.storage, keys[0], b"t")])
    assert isinstance(again[0], str)


async def test_a_full_disk_fails_every_write_of_the_batch_and_leaves_none(
    opened: Opened,
) -> None:
    group = opened.group
    pages = int(sql(opened.database, "PRAGMA page_count")[0][0])
    await group.call(lambda db: db.execute(f"PRAGMA max_page_count = {pages}"))
    keys = [key_of(f"writer{n}") for n in range(4)]
    big = b"x" * 200_000

    results = await batch(opened.group, [create(opened.storage, k, big) for k in keys])

    assert all(refused(result) for result in results), results
    await assert_nothing_landed(opened, keys)
    await group.call(lambda db: db.execute("PRAGMA max_page_count = 1073741823"))
    again = await batch(opened.group, [create(opened.storage, k, big) for k in keys])
    assert all(isinstance(result, str) for result in again), again


async def test_a_batch_that_cannot_take_the_write_lock_times_out_whole(
    opened: Opened,
) -> None:
    """Another process holds the lock past the busy timeout: every write fails."""
    await opened.group.call(lambda db: db.execute("PRAGMA busy_timeout = 20"))
    keys = [key_of(f"writer{n}") for n in range(3)]
    other = sqlite3.connect(opened.database, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        results = await batch(
            opened.group, [create(opened.storage, k, b"t") for k in keys]
        )
    finally:
        other.execute("ROLLBACK")
        other.close()

    assert all(refused(result, "timeout") for result in results), results
    await assert_nothing_landed(opened, keys)


async def test_a_cancelled_waiter_leaves_the_rest_of_its_batch_answered(
    opened: Opened,
) -> None:
    keys = [key_of(f"writer{n}") for n in range(4)]
    started, gate = threading.Event(), threading.Event()

    def hold() -> int:
        started.set()
        return int(gate.wait(timeout=60))

    holding = asyncio.ensure_future(opened.group.call(lambda _: hold()))
    await asyncio.to_thread(started.wait, 60)
    tasks = [asyncio.ensure_future(create(opened.storage, k, b"t")) for k in keys]
    while opened.group.waiting < len(tasks):
        await asyncio.sleep(0)
    tasks[0].cancel()  # the write whose job runs the batch
    tasks[2].cancel()
    gate.set()
    await holding

    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[0], asyncio.CancelledError)
    assert isinstance(results[1], str) and isinstance(results[3], str)
    assert await visible(opened.storage, keys[1]) == b"t"


async def assert_nothing_landed(opened: Opened, keys: Sequence[str]) -> None:
    for key in keys:
        assert await visible(opened.storage, key) is None
        assert await opened.storage.list_versions(key, after=None, limit=5) == []
    assert staged_versions(opened.database) == {}
    assert opened.staged == []


async def test_a_write_after_the_connection_closed_is_refused_each_time(
    tmp_path: Path,
) -> None:
    """The thread is gone: every write is refused at once, none waits for ever."""
    async with open_group_commit(str(tmp_path / "w.db"), "full") as group:
        pass

    for _ in range(2):
        with pytest.raises(sqlite3.ProgrammingError):
            await asyncio.wait_for(group.run(lambda db: 1), timeout=5)


async def test_an_event_that_cannot_be_staged_fails_its_write_and_stays_open(
    opened: Opened,
) -> None:
    """The event and its write commit together or not at all: a later write of
    the call may still take the event."""
    sql(opened.database, "DROP TABLE audit_staged")
    event = PendingEvent(lambda: staged_write("tea"))
    key = key_of("alice")

    with pytest.raises(AppError) as raised:
        await opened.storage.put_if_version(
            Write(key, b"t", META, Change("write_file", "http", AT, event=event)),
            None,
        )

    assert refused(raised.value) and not event.committed
    assert await visible(opened.storage, key) is None
    assert opened.staged == []


class Unexpected(BaseException):
    """Not an ``Exception``: no savepoint catches it, the whole batch fails."""


async def test_an_unexpected_failure_answers_every_write_of_its_batch(
    opened: Opened,
) -> None:
    def fail(db: sqlite3.Cursor) -> int:
        raise Unexpected

    key = key_of("alice")

    results = await asyncio.wait_for(
        batch(
            opened.group, [opened.group.run(fail), create(opened.storage, key, b"t")]
        ),
        timeout=10,
    )

    assert [type(result) for result in results] == [Unexpected, Unexpected]
    await assert_nothing_landed(opened, [key])
    assert await create(opened.storage, key, b"t") is not None  # still writes


async def test_the_write_thread_never_keeps_the_process_alive(tmp_path: Path) -> None:
    """A daemon: a process that never closed its storage still exits."""
    async with open_group_commit(str(tmp_path / "w.db"), "full"):
        threads = [
            thread
            for thread in threading.enumerate()
            if thread.name == "wenchang-sqlite-writes"
        ]

        assert threads and all(thread.daemon for thread in threads)


async def test_a_file_that_cannot_be_opened_is_refused_at_once(tmp_path: Path) -> None:
    """The connection is made on the write thread: its error comes back from there."""
    with pytest.raises(AppError) as raised:
        await asyncio.wait_for(
            open_group_commit(str(tmp_path), "full").__aenter__(), timeout=10
        )

    assert refused(raised.value)
