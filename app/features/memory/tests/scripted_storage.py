"""A Storage port double for use-case tests: a backend that races or loses answers.

Its races are other writers acting just before a conditional write; with
``keeps_call_keys`` its records carry the call key of the change that made
them, as a backend whose writes can end with an outcome unknown keeps them.
"""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from app.features.memory.domain import file_key
from app.features.memory.ports import (
    Change,
    FileMetadata,
    ListedObject,
    StoredObject,
    VersionRecord,
    Write,
)
from app.infra.memory.storage import MemoryStorage

Race = Callable[[MemoryStorage], Awaitable[None]]


def rewrite(content: str, *, name: str = "tea") -> Race:
    """A race: another writer replaces the content of alice's ``notes/<name>``."""

    async def race(storage: MemoryStorage) -> None:
        key = file_key("user", "alice", "notes", name)
        stored = await storage.get(key)
        assert stored is not None
        await storage.put(Write(key, content.encode(), stored.metadata))

    return race


def recreate(content: str, *, name: str = "tea") -> Race:
    """A race: another writer puts alice's ``notes/<name>``, there or not."""

    async def race(storage: MemoryStorage) -> None:
        key = file_key("user", "alice", "notes", name)
        metadata = FileMetadata("", (), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
        await storage.put(Write(key, content.encode(), metadata))

    return race


def remove(*, name: str = "tea") -> Race:
    """A race: another writer deletes alice's ``notes/<name>``."""

    async def race(storage: MemoryStorage) -> None:
        key = file_key("user", "alice", "notes", name)
        stored = await storage.get(key)
        assert stored is not None
        await storage.delete_if_version(key, stored.version)

    return race


class ScriptedStorage:
    """A MemoryStorage backend whose conditional writes can be interfered with.

    Each of ``races`` runs just before one conditional put or delete (the
    first before the first, and so on), as another writer would; each of
    ``after_puts`` runs just after one conditional put, before the caller reads
    again; each of ``after_lists`` runs just after one page has been listed. With
    ``lose_acks`` a conditional put that lands still reports a failed
    precondition, as a backend retrying its own landed request does.
    ``history_reads`` counts the ``list_versions`` calls.
    """

    def __init__(
        self,
        *,
        races: Sequence[Race] = (),
        lose_acks: bool = False,
        keeps_call_keys: bool = False,
    ) -> None:
        self.inner = MemoryStorage()
        self.races = list(races)
        self.lose_acks = lose_acks
        self.keeps_call_keys = keeps_call_keys
        self.after_puts: list[Race] = []
        self.after_lists: list[Callable[[], Awaitable[object]]] = []
        self.conditional_puts = 0
        self.gets = 0
        self.history_reads = 0
        self._calls: dict[str, str] = {}  # version -> the call that made it

    async def _kept(self, key: str, change: Change | None) -> None:
        """Remember the call of the change whose record is now ``key``'s newest."""
        if change is not None and self.keeps_call_keys:
            newest = await self.inner.list_versions(key, after=None, limit=1)
            self._calls[newest[0].version] = change.call

    def _with_call(self, record: VersionRecord) -> VersionRecord:
        return replace(record, call=self._calls.get(record.version, ""))

    async def _race(self) -> None:
        if self.races:
            await self.races.pop(0)(self.inner)

    async def get(self, key: str) -> StoredObject | None:
        self.gets += 1
        return await self.inner.get(key)

    async def put(self, write: Write) -> str:
        version = await self.inner.put(write)
        await self._kept(write.key, write.change)
        return version

    async def put_if_version(self, write: Write, expected: str | None) -> str | None:
        self.conditional_puts += 1
        await self._race()
        version = await self.inner.put_if_version(write, expected)
        if version is not None:
            await self._kept(write.key, write.change)
        if self.after_puts:
            await self.after_puts.pop(0)(self.inner)
        return None if self.lose_acks else version

    async def delete_if_version(
        self, key: str, expected: str, *, change: Change | None = None
    ) -> bool:
        await self._race()
        deleted = await self.inner.delete_if_version(key, expected, change=change)
        if deleted:
            await self._kept(key, change)
        return deleted

    async def erase_if_version(self, key: str, expected: str) -> bool:
        await self._race()
        return await self.inner.erase_if_version(key, expected)

    async def own_change(self, key: str, call: str) -> VersionRecord | None:
        # As GCS does: the newest records, searched for the call's own.
        if not (call and self.keeps_call_keys):
            return None
        for record in await self.list_versions(key, after=None, limit=20):
            if record.call == call:
                return await self.get_version(key, record.version)
        return None

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[VersionRecord]:
        self.history_reads += 1
        records = await self.inner.list_versions(key, after=after, limit=limit)
        return [self._with_call(record) for record in records]

    async def get_version(self, key: str, version: str) -> VersionRecord | None:
        record = await self.inner.get_version(key, version)
        return None if record is None else self._with_call(record)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        page = await self.inner.list_page(prefix, start_after=start_after, limit=limit)
        if self.after_lists:
            await self.after_lists.pop(0)()
        return page

    async def count(self, prefix: str) -> int:
        return await self.inner.count(prefix)

    async def ping(self) -> None:
        await self.inner.ping()

    async def scrub(self, prefix: str) -> None:
        await self.inner.scrub(prefix)
