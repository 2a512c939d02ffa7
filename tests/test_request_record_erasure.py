"""Every Idempotency-Key store erases an entity's records, and only those.

A purge calls ``erase_scope`` with the entity's prefix (the first part of each
record's scope): afterwards a key of that entity reserves afresh, whoever the
caller, while a neighbouring entity's records (``user/alice2/``) still replay.
A sweep calls ``erase_files`` with the tags of the files it erased: only the
records naming one of them (or no file) go, in that entity only.
"""

import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from tenchi.idempotency import IdempotencyReplay, IdempotencyReservation
from tenchi.testing import verify_idempotency_store

from app.features.memory.ports.request_records import (
    RequestRecords,
    record_fingerprint,
    record_scope,
    sweep_tags,
)
from app.infra.memory.idempotency_store import MemoryIdempotencyStore
from app.infra.redis.idempotency_store import open_redis_idempotency_store
from app.infra.sqlite.idempotency_store import open_sqlite_idempotency_store
from tests.support.redis_server import RedisServer

Opener = Callable[[], AbstractAsyncContextManager[RequestRecords]]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def shared(store: RequestRecords) -> Opener:
    @asynccontextmanager
    async def opened() -> AsyncGenerator[RequestRecords]:
        yield store

    return opened


async def test_the_in_process_store_conforms() -> None:
    clock = Clock()
    await verify_idempotency_store(
        shared(MemoryIdempotencyStore(clock=clock)), advance=clock.advance
    )


@pytest.fixture(params=["memory", "sqlite", "redis"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    match request.param:
        case "memory":
            return shared(MemoryIdempotencyStore())
        case "sqlite":
            path = str(tmp_path / "records.db")
            return lambda: open_sqlite_idempotency_store(path)
        case _:
            server: RedisServer = request.getfixturevalue("redis_server")
            return lambda: open_redis_idempotency_store(server.url)


async def settle(
    store: RequestRecords, scope: str, key: str, fingerprint: str = "f"
) -> None:
    decision = await store.reserve(
        namespace="memory",
        scope=scope,
        key=key,
        fingerprint=fingerprint,
        completed_ttl=600,
        reservation_ttl=60,
    )
    assert isinstance(decision, IdempotencyReservation)
    await store.complete(decision, result_json=b'{"version":"v1"}')


async def again(
    store: RequestRecords, scope: str, key: str, fingerprint: str = "f"
) -> object:
    return await store.reserve(
        namespace="memory",
        scope=scope,
        key=key,
        fingerprint=fingerprint,
        completed_ttl=600,
        reservation_ttl=60,
    )


async def test_erasing_an_entity_frees_its_keys_and_keeps_its_neighbours(
    opener: Opener,
) -> None:
    # Fresh names: the Redis server is shared by the session's other tests.
    entity = f"alice-{uuid.uuid4().hex[:8]}"
    alice, neighbour = f"user/{entity}/", f"user/{entity}2/"
    async with opener() as store:
        for caller in ("caller-a", "caller-b"):
            await settle(store, record_scope(alice, caller), f"{alice}key")
        await settle(store, record_scope(neighbour, "caller-a"), f"{alice}key")
        # A key text that looks like the prefix is not the record's scope.
        await settle(store, record_scope("", "caller-a"), f"{alice}key")

        assert await store.erase_scope(alice) == 2
        assert await store.erase_scope(alice) == 0  # safe to repeat

        for caller in ("caller-a", "caller-b"):
            fresh = await again(store, record_scope(alice, caller), f"{alice}key")
            assert isinstance(fresh, IdempotencyReservation)
        for scope in (record_scope(neighbour, "caller-a"), "caller-a"):
            kept = await again(store, scope, f"{alice}key")
            assert kept == IdempotencyReplay(result_json=b'{"version":"v1"}')


async def test_erasing_files_frees_only_the_records_naming_them(
    opener: Opener,
) -> None:
    entity = f"alice-{uuid.uuid4().hex[:8]}"
    alice, neighbour = f"user/{entity}/", f"user/{entity}2/"
    swept, lasting = f"{alice}notes/swept.md", f"{alice}notes/lasting.md"
    records = {
        "swept": (alice, record_fingerprint("write_file", [swept], "d")),
        "moved": (alice, record_fingerprint("rename_file", [lasting, swept], "d")),
        "none": (alice, record_fingerprint("run_memory_command", [], "d")),
        "lasting": (alice, record_fingerprint("write_file", [lasting], "d")),
        "neighbour": (neighbour, record_fingerprint("write_file", [swept], "d")),
    }
    async with opener() as store:
        for key, (prefix, fingerprint) in records.items():
            await settle(store, record_scope(prefix, "caller"), key, fingerprint)

        assert await store.erase_files(alice, sweep_tags([swept])) == 3
        assert await store.erase_files(alice, sweep_tags([swept])) == 0

        for key, (prefix, fingerprint) in records.items():
            answer = await again(
                store, record_scope(prefix, "caller"), key, fingerprint
            )
            replayed = answer == IdempotencyReplay(result_json=b'{"version":"v1"}')
            assert replayed == (key in {"lasting", "neighbour"}), key


async def test_erasing_no_files_erases_nothing(opener: Opener) -> None:
    """A sweep that erased no file erases no record (no tag is not every tag)."""
    entity = f"alice-{uuid.uuid4().hex[:8]}"
    alice = f"user/{entity}/"
    fingerprint = record_fingerprint("write_file", [f"{alice}notes/a.md"], "d")
    async with opener() as store:
        await settle(store, record_scope(alice, "caller"), "key", fingerprint)

        assert await store.erase_files(alice, []) == 0

        kept = await again(store, record_scope(alice, "caller"), "key", fingerprint)
        assert kept == IdempotencyReplay(result_json=b'{"version":"v1"}')
