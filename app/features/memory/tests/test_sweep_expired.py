"""memory.sweep_expired through its use case: what it erases, keeps and reports."""

from dataclasses import replace
from datetime import timedelta

import pytest
from tenchi.errors import AppError
from tenchi.idempotency import IdempotencyReplay, IdempotencyReservation

from app.features.memory.ports import Write
from app.features.memory.ports.request_records import (
    record_fingerprint,
    record_scope,
)
from app.features.memory.schemas import SweepExpired
from app.features.memory.use_cases.sweep_expired import sweep_expired
from app.features.memory.use_cases.write_file import write_file
from app.infra.memory.idempotency_store import MemoryIdempotencyStore
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext
from tests.support.contexts import with_services

from .conftest import START
from .test_expiry import SetClock, context_at, write

ALICE, BOB = "user/alice/", "user/bob/"
KEY = ALICE + "notes/tea.md"


async def expiring(
    clock: SetClock, storage: MemoryStorage, grant: str = "user=alice:owner"
) -> AppContext:
    """tea (expires in 60 s, written twice: two records) and lasting (never)."""
    context = context_at(clock, storage, (grant,))
    made = await write_file(write(ttl_seconds=60), context)
    await write_file(write(expected=made.version), context)
    lasting = write().model_copy(update={"name": "lasting"})
    await write_file(lasting, context)
    return context


async def history_of(storage: MemoryStorage, key: str = KEY) -> int:
    return len(await storage.list_versions(key, after=None, limit=100))


async def test_a_dry_run_is_the_default_and_erases_nothing() -> None:
    clock, storage = SetClock(), MemoryStorage()
    context = await expiring(clock, storage)
    await expiring(clock, storage, "user=bob:owner")
    clock.now = START + timedelta(seconds=61)

    report = await sweep_expired(SweepExpired(), context)

    assert report.dry_run and report.kept == 0
    assert [(f.entity_id, f.area, f.name) for f in report.files] == [
        ("alice", "notes", "tea"),
        ("bob", "notes", "tea"),
    ]
    assert report.files[0].expires_at == "2026-03-01T12:01:00Z"
    assert await storage.get(KEY) is not None and await history_of(storage) == 2


async def test_a_sweep_erases_expired_files_with_their_history_once() -> None:
    clock, storage = SetClock(), MemoryStorage()
    context = await expiring(clock, storage)
    await expiring(clock, storage, "user=bob:owner")
    clock.now = START + timedelta(seconds=61)

    report = await sweep_expired(SweepExpired(dry_run=False), context)
    again = await sweep_expired(SweepExpired(dry_run=False), context)

    assert [(f.entity_id, f.name) for f in report.files] == [
        ("alice", "tea"),
        ("bob", "tea"),
    ]
    assert again.files == [] and again.kept == 0
    for entity in (ALICE, BOB):
        assert await storage.get(entity + "notes/tea.md") is None
        assert await history_of(storage, entity + "notes/tea.md") == 0
        assert await storage.get(entity + "notes/lasting.md") is not None


async def test_nothing_is_erased_before_its_instant() -> None:
    clock, storage = SetClock(), MemoryStorage()
    context = await expiring(clock, storage)
    clock.now = START + timedelta(seconds=59)

    report = await sweep_expired(SweepExpired(dry_run=False), context)

    assert report.files == [] and await storage.get(KEY) is not None


@pytest.mark.parametrize(
    ("named", "erased"),
    [
        ({"scope": "user", "entity_id": "bob"}, ["bob"]),
        ({"scope": "user"}, ["alice", "bob"]),
        ({"scope": "team"}, []),
    ],
)
async def test_a_sweep_covers_the_entity_or_scope_it_names(
    named: dict[str, str], erased: list[str]
) -> None:
    clock, storage = SetClock(), MemoryStorage()
    context = await expiring(clock, storage)
    await expiring(clock, storage, "user=bob:owner")
    clock.now = START + timedelta(seconds=61)

    request = SweepExpired.model_validate(named | {"dry_run": False})
    report = await sweep_expired(request, context)

    assert [f.entity_id for f in report.files] == erased


async def test_an_entity_without_its_scope_is_refused() -> None:
    context = context_at(SetClock(), MemoryStorage())
    with pytest.raises(AppError) as raised:
        await sweep_expired(SweepExpired(entity_id="alice"), context)
    assert raised.value.code == "INVALID_ARGUMENT"
    assert raised.value.details["argument"] == "scope"


class RewrittenOnErase(MemoryStorage):
    """A writer gives the file a new version and expiry just before the erase."""

    async def erase_if_version(self, key: str, expected: str) -> bool:
        stored = await self.get(key)
        assert stored is not None
        later = stored.metadata.expires_at
        assert later is not None
        meta = replace(stored.metadata, expires_at=later + timedelta(days=1))
        await self.put_if_version(Write(key, b"- [stated] new\n", meta), expected)
        return await super().erase_if_version(key, expected)


async def test_a_file_rewritten_between_listing_and_erasing_is_kept() -> None:
    clock, storage = SetClock(), RewrittenOnErase()
    context = await expiring(clock, storage)
    clock.now = START + timedelta(seconds=61)

    report = await sweep_expired(SweepExpired(dry_run=False), context)

    stored = await storage.get(KEY)
    assert (report.files, report.kept) == ([], 1)
    assert stored is not None and stored.data == b"- [stated] new\n"
    assert await history_of(storage) == 2


async def test_a_sweep_erases_the_request_records_of_the_files_it_erased() -> None:
    """Records naming the swept file (or no file) go; those of a file still
    there, and another entity's, stay."""
    clock, storage = SetClock(), MemoryStorage()
    context = await expiring(clock, storage)
    await write_file(
        write().model_copy(update={"scope": "team"}),
        context_at(clock, storage, ("team=t-1:owner",)),
    )
    store = MemoryIdempotencyStore()
    context = with_services(context, idempotency=store)
    team_tea = "team/t-1/notes/tea.md"
    held: dict[str, tuple[str, list[str]]] = {
        "swept": (ALICE, [KEY]),
        "renamed away": (ALICE, [ALICE + "notes/old.md", KEY]),
        "no file": (ALICE, []),
        "lasting": (ALICE, [ALICE + "notes/lasting.md"]),
        "other entity": ("team/t-1/", [team_tea]),
    }

    def record(name: str, token: str) -> IdempotencyReservation:
        entity, keys = held[name]
        fingerprint = record_fingerprint("write_file", keys, "digest")
        scope = record_scope(entity, "caller")
        return IdempotencyReservation("ns", scope, name, fingerprint, token, None)

    for name in held:
        assert await store.claim(record(name, "t1"), 60) == record(name, "t1")
        assert await store.settle(record(name, "t1"), b"{}")
    clock.now = START + timedelta(seconds=61)

    await sweep_expired(SweepExpired(dry_run=False), context)

    answers = {name: await store.claim(record(name, "t2"), 60) for name in held}
    fresh = {name for name, answer in answers.items() if answer == record(name, "t2")}
    assert fresh == {"swept", "renamed away", "no file"}
    assert isinstance(answers["lasting"], IdempotencyReplay)
    assert isinstance(answers["other entity"], IdempotencyReplay)


async def test_an_expired_object_at_a_key_no_file_has_is_left_alone() -> None:
    """Storage may hold an object under the entity that is no file (a longer
    path); expired metadata or not, a sweep neither reports nor erases it."""
    clock, storage = SetClock(), MemoryStorage()
    context = await expiring(clock, storage)
    tea = await storage.get(KEY)
    assert tea is not None and tea.metadata.expires_at is not None
    odd = ALICE + "notes/old/tea.md"
    await storage.put(Write(odd, b"odd\n", tea.metadata))
    clock.now = START + timedelta(seconds=61)

    report = await sweep_expired(SweepExpired(dry_run=False), context)

    assert [(f.area, f.name) for f in report.files] == [("notes", "tea")]
    assert await storage.get(odd) is not None
