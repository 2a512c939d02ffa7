"""memory.purge: dry runs, version-guarded passes, and erasure without a trace.

The erasure cases write a canary entity (its id, names, bodies, metadata and
writer label all contain ``canary``) among neighbours, read its index (so the
cache holds it), purge it, and then search the raw backend for the canary.
"""

import os
import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import cast
from urllib.parse import quote

import httpx
import pytest
from redis.asyncio import Redis
from tenchi.errors import AppError

from app.features.memory.domain import file_key
from app.features.memory.ports import (
    Change,
    FileMetadata,
    ListedObject,
    StoredObject,
    VersionRecord,
    Write,
)
from app.features.memory.schemas import (
    AppendLine,
    DeleteFile,
    GetMemoryIndex,
    PurgeMemory,
    ReadFile,
    WriteFile,
)
from app.features.memory.use_cases.append_line import append_line
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.get_memory_index import get_memory_index
from app.features.memory.use_cases.purge_memory import PURGE_MAX_PASSES, purge_memory
from app.features.memory.use_cases.read_file import read_file
from app.features.memory.use_cases.write_file import write_file
from app.features.search.schemas import SearchMemory
from app.features.search.use_cases.search_memory import search_memory
from app.infra.change_markers import MARKER_KEYS
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from app.shared.errors import purge_incomplete
from app.shared.identity import Grant, Identity
from tests.support.contexts import with_services
from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.loopback import LOOPBACK
from tests.support.redis_server import RedisServer
from tests.support.storage_adapters import storage_url

CANARY = "canary"
CANARY_ENTITY = "canary-entity"
CANARY_FILES = 12
GHOST = "ghost-canary-past"
NEIGHBOUR_ENTITIES = [f"{side}{i:04d}" for side in "ae" for i in range(150)]
MEDIA = {"alt": "media"}
DUMP_KEYS = """
local found = {}
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  table.insert(found, key)
  if redis.call('TYPE', key)['ok'] == 'string' then
    table.insert(found, redis.call('GET', key))
  end
end
return found
"""
"""Every key matching ARGV[1], each followed by its value when it is a string."""
META = FileMetadata("neighbour", ("n",), ("task",), datetime(2025, 1, 1, tzinfo=UTC))


def settings_for(url: str, root: Path, *, index_cache: str = "memory") -> Settings:
    return Settings(
        storage=url,
        tokens_file=str(root / "tokens.json"),
        cursor_secret="purge-tests-cursor-secret",
        index_cache=index_cache,
    )


@asynccontextmanager
async def task_context(settings: Settings) -> AsyncGenerator[AppContext]:
    async with create_lifespan(settings, surface="task")() as runtime:
        yield runtime.context


def purge(entity_id: str, *, dry_run: bool = False) -> PurgeMemory:
    return PurgeMemory(scope="user", entity_id=entity_id, dry_run=dry_run)


def caller(context: AppContext, entity_id: str, label: str | None = None) -> AppContext:
    grants = {"user": Grant(entity_id, "owner")}
    return replace(context, identity=Identity(grants, label=label), surface="http")


async def create(context: AppContext, name: str, content: str = "") -> None:
    request = WriteFile(
        scope="user",
        area="notes",
        name=name,
        content=content,
        description="",
        aliases=[],
        expected_version=None,
    )
    await write_file(request, context)


async def seed_canary(context: AppContext) -> None:
    """The canary's files (each written, then appended to) among neighbours."""
    for entity_id in NEIGHBOUR_ENTITIES:
        key = file_key("user", entity_id, "notes", "n")
        await context.storage.put(Write(key, b"- [stated] neighbour " * 12, META))
    canary = caller(context, CANARY_ENTITY, label="canary-label")
    for i in range(CANARY_FILES):
        written = await write_file(
            WriteFile(
                scope="user",
                area="canary-area",
                name=f"canary-{i:02d}",
                content="- [stated] canary secret " + "c" * 150 + "\n",
                description="canary description",
                aliases=["canary alias"],
                expected_version=None,
            ),
            canary,
        )
        await append_line(
            AppendLine(
                scope="user",
                area="canary-area",
                name=f"canary-{i:02d}",
                line="- [stated] canary again",
                expected_version=written.version,
            ),
            canary,
        )
    await seed_past_canary(canary)
    assert (
        len((await get_memory_index(GetMemoryIndex(), canary)).entries) == CANARY_FILES
    )
    # A search fills the search corpus caches (and reads SQLite's postings).
    found = await search_memory(SearchMemory(query="canary", limit=50), canary)
    assert len(found.hits) == CANARY_FILES


async def seed_past_canary(canary: AppContext) -> None:
    """Canary text that only ever lived in old versions, and a deleted file."""
    area, ghost = "canary-area", f"- [stated] {GHOST}\n"
    current = await read_file(
        ReadFile(scope="user", area=area, name="canary-00"), canary
    )
    version = current.version
    for content in (ghost, "- [stated] plain\n"):
        request = WriteFile(
            scope="user",
            area=area,
            name="canary-00",
            content=content,
            description="plain",
            aliases=[],
            expected_version=version,
        )
        version = (await write_file(request, canary)).version
    gone = WriteFile(
        scope="user",
        area=area,
        name="gone",
        content=ghost,
        description=GHOST,
        aliases=[GHOST],
        expected_version=None,
    )
    created = await write_file(gone, canary)
    deleted = DeleteFile(
        scope="user", area=area, name="gone", expected_version=created.version
    )
    await delete_file(deleted, canary)
    key = file_key("user", CANARY_ENTITY, area, "canary-00")
    records = await canary.storage.list_versions(key, after=None, limit=10)
    past = await canary.storage.get_version(key, records[1].version)
    assert past is not None and past.data == ghost.encode()


async def purge_canary(context: AppContext) -> None:
    report = await purge_memory(purge(CANARY_ENTITY), context)

    assert (report.objects, report.passes) == (CANARY_FILES, 1)
    assert await context.storage.count("user/") == len(NEIGHBOUR_ENTITIES)
    key = file_key("user", CANARY_ENTITY, "canary-area", "gone")
    assert await context.storage.list_versions(key, after=None, limit=9) == []
    neighbour = caller(context, NEIGHBOUR_ENTITIES[0])
    assert (await search_memory(SearchMemory(query="canary"), neighbour)).hits == []


def raw_files(root: Path) -> bytes:
    """Every file name and byte under ``root``."""
    found = b""
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory, name)
            found += str(path.relative_to(root)).encode() + path.read_bytes()
    return found


async def test_dry_run_reports_and_deletes_nothing(tmp_path: Path) -> None:
    """A dry run lists what would go and changes nothing."""
    async with task_context(settings_for("memory://", tmp_path)) as context:
        alice = caller(context, "alice")
        await create(alice, "a")
        await create(alice, "b")

        report = await purge_memory(purge("alice", dry_run=True), context)

        assert (report.dry_run, report.objects, report.passes) == (True, 2, 0)
        assert [f.name for f in report.files] == ["a", "b"]
        assert await context.storage.count("user/alice/") == 2


async def test_purge_deletes_exactly_the_entity_prefix(tmp_path: Path) -> None:
    """alice goes; alice2 and alice's other scopes stay."""
    async with task_context(settings_for("memory://", tmp_path)) as context:
        await create(caller(context, "alice"), "a")
        await create(caller(context, "alice2"), "a")
        await context.storage.put(
            Write(file_key("team", "alice", "notes", "a"), b"", META)
        )

        report = await purge_memory(purge("alice"), context)

        assert (report.objects, report.passes, report.dry_run) == (1, 1, False)
        assert await context.storage.count("user/alice/") == 0
        assert await context.storage.count("user/alice2/") == 1
        assert await context.storage.count("team/alice/") == 1


class ConcurrentWriter:
    """MemoryStorage with another writer racing the purge on ``key``.

    Before the first ``rewrites`` deletes of ``key`` the writer replaces it,
    so the purge's version-guarded delete fails and a later pass must retry.
    """

    def __init__(self, key: str, *, rewrites: int) -> None:
        self.inner = MemoryStorage()
        self.key = key
        self.rewrites = rewrites

    async def get(self, key: str) -> StoredObject | None:
        return await self.inner.get(key)

    async def put(self, write: Write) -> str:
        return await self.inner.put(write)

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        return await self.inner.put_if_version(write, expected)

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        if key == self.key and self.rewrites:
            self.rewrites -= 1
            await self.inner.put(Write(key, b"- [stated] rewritten\n", META))
        return await self.inner.delete_if_version(key, expected, change=change)

    async def erase_if_version(self, key: str, expected: str) -> bool:
        return await self.inner.erase_if_version(key, expected)

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[VersionRecord]:
        return await self.inner.list_versions(key, after=after, limit=limit)

    async def get_version(self, key: str, version: str) -> VersionRecord | None:
        return await self.inner.get_version(key, version)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        return await self.inner.list_page(prefix, start_after=start_after, limit=limit)

    async def count(self, prefix: str) -> int:
        return await self.inner.count(prefix)

    async def ping(self) -> None:
        await self.inner.ping()

    async def scrub(self, prefix: str) -> None:
        await self.inner.scrub(prefix)


@asynccontextmanager
async def racing_context(
    tmp_path: Path, *, rewrites: int
) -> AsyncGenerator[AppContext]:
    storage = ConcurrentWriter(
        file_key("user", "alice", "notes", "b"), rewrites=rewrites
    )
    async with task_context(settings_for("memory://", tmp_path)) as context:
        racing = with_services(
            context, storage=storage, index_cache=MemoryIndexCache(ttl=60)
        )
        for name in ("a", "b", "c"):
            await create(caller(racing, "alice"), name)
        yield racing


async def test_an_object_changed_during_a_pass_is_deleted_by_the_next(
    tmp_path: Path,
) -> None:
    """A delete guarded by a stale version fails; the re-list catches the object."""
    async with racing_context(tmp_path, rewrites=1) as context:
        report = await purge_memory(purge("alice"), context)

        assert (report.objects, report.passes) == (3, 2)
        assert await context.storage.count("user/alice/") == 0


async def test_purge_fails_loudly_when_objects_keep_changing(tmp_path: Path) -> None:
    """After five passes with something left it raises, and still drops the cache."""
    async with racing_context(tmp_path, rewrites=PURGE_MAX_PASSES) as context:
        alice = caller(context, "alice")
        assert len((await get_memory_index(GetMemoryIndex(), alice)).entries) == 3

        with pytest.raises(AppError) as raised:
            await purge_memory(purge("alice"), context)

        assert raised.value.definition is purge_incomplete
        assert raised.value.details["remaining"] == 1
        assert raised.value.details["passes"] == PURGE_MAX_PASSES
        assert (await context.index_cache.get("user/alice/")).listing is None


async def test_purge_leaves_no_trace_in_memory_storage_or_cache(tmp_path: Path) -> None:
    """Nothing of the canary remains in the in-memory store or index cache."""
    async with task_context(settings_for("memory://", tmp_path)) as context:
        await seed_canary(context)

        await purge_canary(context)

        assert CANARY not in repr(vars(context.storage)).lower()
        assert CANARY not in repr(vars(context.index_cache)).lower()


async def test_purge_leaves_no_trace_in_sqlite_files(tmp_path: Path) -> None:
    """Not in the database, its free pages, the WAL or the shared-memory file."""
    database = tmp_path / "wenchang.db"
    async with task_context(settings_for(f"sqlite:///{database}", tmp_path)) as context:
        await seed_canary(context)
        assert CANARY.encode() in raw_files(tmp_path)

        await purge_canary(context)

        for suffix in ("", "-wal", "-shm"):
            path = database.with_name(database.name + suffix)
            assert not path.exists() or CANARY.encode() not in path.read_bytes()


async def test_purge_leaves_no_trace_in_the_filesystem_root(tmp_path: Path) -> None:
    """No file name, directory name or byte under the root mentions the canary."""
    root = tmp_path / "files"
    async with task_context(settings_for(f"file://{root}", tmp_path)) as context:
        await seed_canary(context)

        await purge_canary(context)

        assert CANARY.encode() not in raw_files(root).lower()


async def test_purge_leaves_no_trace_in_the_gcs_bucket(
    tmp_path: Path, gcs_emulator: GcsEmulator
) -> None:
    """No object (current or noncurrent) is named after, or holds, the canary."""
    url = storage_url("gcs", tmp_path)
    async with task_context(settings_for(url, tmp_path)) as context:
        await seed_canary(context)

        await purge_canary(context)

    prefix = url.split("/", 3)[3].split("?")[0]
    listing = f"{gcs_emulator.url}/storage/v1/b/{TEST_BUCKET}/o"
    async with httpx.AsyncClient() as http:
        found = await http.get(listing, params={"versions": "true", "prefix": prefix})
        names = [item["name"] for item in found.json().get("items", [])]
        bodies = [
            (await http.get(f"{listing}/{quote(name, safe='')}", params=MEDIA)).content
            for name in names
        ]
    # Besides the neighbours' files: the canary's change marker, named by a
    # digest of its prefix and holding no content.
    files = [name for name in names if f"/{MARKER_KEYS}" not in name]
    assert len(files) == len(NEIGHBOUR_ENTITIES)
    assert not any(CANARY in name for name in names)
    assert not any(CANARY.encode() in body for body in bodies)


async def redis_dump(server: RedisServer, pattern: str) -> bytes:
    """Every key matching ``pattern`` and every string value, concatenated."""
    client = Redis(host=LOOPBACK, port=server.port)
    try:
        dump = client.register_script(DUMP_KEYS)
        return b"".join(cast(list[bytes], await dump(args=[pattern])))
    finally:
        await client.aclose()


async def test_purge_leaves_no_trace_in_the_redis_index_cache(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The shared index cache keeps no key or listing naming the canary."""
    key_prefix = f"purge-{uuid.uuid4().hex}:"
    cache = f"{redis_server.url}?key_prefix={key_prefix}"
    settings = settings_for("memory://", tmp_path, index_cache=cache)
    async with task_context(settings) as context:
        await seed_canary(context)
        assert CANARY.encode() in await redis_dump(redis_server, f"{key_prefix}*")

        await purge_canary(context)

    assert CANARY.encode() not in await redis_dump(redis_server, f"{key_prefix}*")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_after_a_purge_search_finds_nothing_of_the_entity(
    tmp_path: Path, kind: str
) -> None:
    """Found before; after the purge returns, the entity's own search is empty."""
    url = storage_url(kind, tmp_path)
    async with task_context(settings_for(url, tmp_path)) as context:
        alice = caller(context, "alice")
        await create(alice, "tea", "- [stated] Oolong daily.\n")
        query = SearchMemory(query="oolong")
        assert len((await search_memory(query, alice)).hits) == 1

        await purge_memory(purge("alice"), context)

        assert (await search_memory(query, alice)).hits == []
