"""purge_memory over the in-memory adapter: passes, dry runs and what it erases."""

from datetime import datetime

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import Subject
from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.features.memory.ports.storage_reads import LIST_BATCH
from app.features.memory.schemas import FileName, PurgeMemory
from app.features.memory.use_cases.purge_memory import (
    PURGE_MAX_PASSES,
    purge_memory,
)
from app.infra.memory.idempotency_store import MemoryIdempotencyStore
from app.infra.memory.index_cache import NoIndexCache
from app.infra.memory.storage import MemoryStorage
from app.infra.stream_audit_log import NoAuditLog
from app.server.context import AppContext
from app.shared.errors import invalid_argument, purge_incomplete
from tests.support.contexts import with_services

from .conftest import START, TickingClock, create, make_context, snapshot
from .scripted_storage import ScriptedStorage, recreate


class Recorded:
    """What a purge asked of the ports around storage, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []


class SpyCache(NoIndexCache):
    def __init__(self, recorded: Recorded) -> None:
        super().__init__()
        self.recorded = recorded

    async def invalidate(self, prefix: str, *, after_write: bool = False) -> None:
        self.recorded.calls.append(("invalidate", prefix))


class SpyRecords(MemoryIdempotencyStore):
    def __init__(self, recorded: Recorded) -> None:
        super().__init__()
        self.recorded = recorded

    async def erase_scope(self, prefix: str) -> int:
        self.recorded.calls.append(("erase_scope", prefix))
        return 0


class SpyAudit(NoAuditLog):
    def __init__(self, recorded: Recorded) -> None:
        self.recorded = recorded

    async def erase(self, subject: Subject, *, at: datetime) -> None:
        self.recorded.calls.append(("erase", (subject, at)))


class SpyStorage(MemoryStorage):
    def __init__(self, recorded: Recorded) -> None:
        super().__init__()
        self.recorded = recorded

    async def scrub(self, prefix: str) -> None:
        self.recorded.calls.append(("scrub", prefix))
        await super().scrub(prefix)


def spied(recorded: Recorded, clock: TickingClock | None = None) -> AppContext:
    context = make_context(
        storage=SpyStorage(recorded), index_cache=SpyCache(recorded), clock=clock
    )
    return with_services(
        context, idempotency=SpyRecords(recorded), audit=SpyAudit(recorded)
    )


ALICE = PurgeMemory(scope="user", entity_id="alice", dry_run=False)


async def test_purge_deletes_every_file_of_the_entity_and_only_it() -> None:
    recorded, clock = Recorded(), TickingClock()
    context = spied(recorded, clock)
    await create(context, name="tea")
    await create(context, area="work", name="coffee")
    await create(context, scope="team", name="tea")
    recorded.calls.clear()

    report = await purge_memory(ALICE, context)

    assert report.model_dump() == {
        "scope": "user",
        "entity_id": "alice",
        "dry_run": False,
        "objects": 2,
        "files": [
            {"area": "notes", "name": "tea"},
            {"area": "work", "name": "coffee"},
        ],
        "passes": 1,
    }
    left = [key for key, _ in await snapshot(context.storage)]
    assert left == [file_key("team", "t-1", "notes", "tea")]
    prefix = "user/alice/"
    assert recorded.calls == [
        ("invalidate", prefix),
        ("erase_scope", prefix),
        ("erase", (Subject("user", "alice"), clock.now)),
        ("scrub", prefix),
    ]


async def test_a_dry_run_lists_what_a_purge_would_delete_and_changes_nothing() -> None:
    recorded = Recorded()
    context = spied(recorded)
    await create(context, name="tea")
    await create(context, name="coffee")
    before = await snapshot(context.storage)
    recorded.calls.clear()

    report = await purge_memory(ALICE.model_copy(update={"dry_run": True}), context)

    assert report.dry_run
    assert report.objects == 2
    assert report.files == [
        FileName(area="notes", name="coffee"),
        FileName(area="notes", name="tea"),
    ]
    assert report.passes == 0
    assert await snapshot(context.storage) == before
    assert recorded.calls == []


async def test_purge_of_an_empty_entity_runs_no_pass_but_still_erases() -> None:
    recorded = Recorded()
    context = spied(recorded)

    report = await purge_memory(ALICE, context)

    assert (report.objects, report.files, report.passes) == (0, [], 0)
    assert [name for name, _ in recorded.calls] == [
        "invalidate",
        "erase_scope",
        "erase",
        "scrub",
    ]


async def test_purge_counts_objects_that_are_not_files_but_names_only_files() -> None:
    context = make_context()
    await create(context, name="tea")
    metadata = FileMetadata("", (), ("task",), START)
    await context.storage.put(Write("user/alice/stray", b"x", metadata))

    report = await purge_memory(ALICE, context)

    assert report.objects == 2
    assert report.files == [FileName(area="notes", name="tea")]
    assert await snapshot(context.storage) == []


async def test_purge_runs_another_pass_for_a_file_a_writer_changed() -> None:
    """A delete that loses to a writer leaves the file to the next pass."""
    storage = ScriptedStorage()
    context = make_context(storage=storage)
    await create(context, name="tea")
    storage.races = [recreate("- [stated] again\n")]

    report = await purge_memory(ALICE, context)

    assert report.passes == 2
    assert report.objects == 1
    assert await snapshot(storage.inner) == []


async def test_purge_gives_up_after_five_passes_and_still_invalidates() -> None:
    recorded = Recorded()
    storage = ScriptedStorage()
    context = make_context(storage=storage, index_cache=SpyCache(recorded))
    context = with_services(
        context, idempotency=SpyRecords(recorded), audit=SpyAudit(recorded)
    )
    await create(context, name="tea")
    storage.races = [recreate("- [stated] again\n")] * (PURGE_MAX_PASSES + 1)
    recorded.calls.clear()

    with pytest.raises(AppError) as raised:
        await purge_memory(ALICE, context)

    assert raised.value.definition is purge_incomplete
    assert raised.value.details["remaining"] == 1
    assert raised.value.details["passes"] == PURGE_MAX_PASSES
    assert PURGE_MAX_PASSES == 5
    assert recorded.calls == [("invalidate", "user/alice/")]


async def test_purge_sweeps_past_one_listing_batch() -> None:
    context = make_context()
    storage = context.storage
    metadata = FileMetadata("", (), ("task",), START)
    for n in range(LIST_BATCH + 1):
        key = file_key("user", "alice", "notes", f"f{n:05d}")
        await storage.put(Write(key, b"", metadata))

    report = await purge_memory(ALICE, context)

    assert report.objects == LIST_BATCH + 1
    assert report.passes == 1
    assert await snapshot(storage) == []


@pytest.mark.parametrize(
    ("scope", "entity_id", "argument"),
    [("", "alice", "scope"), ("user", "a/b", "entity_id")],
)
async def test_purge_refuses_a_prefix_that_is_not_one_entity(
    context: AppContext, scope: str, entity_id: str, argument: str
) -> None:
    await create(context)
    before = await snapshot(context.storage)

    with pytest.raises(AppError) as raised:
        # Built past its validators: the use case checks the prefix itself.
        request = PurgeMemory.model_construct(
            scope=scope, entity_id=entity_id, dry_run=False
        )
        await purge_memory(request, context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == argument
    assert await snapshot(context.storage) == before
