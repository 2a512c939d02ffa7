"""In-memory storage for tests and trials; a real adapter of the Storage port."""

import bisect
import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta

from app.features.memory import ports
from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.domain.timestamps import format_timestamp
from app.infra.change_numbers import first_seq
from app.infra.history_records import expired, tombstone, without_data, written


class MemoryStorage:
    """One process, one event loop: no method awaits, so each is atomic.

    History is a list of records per key, oldest first, appended in the same
    step as the mutation it records.
    """

    def __init__(self, *, retention: ports.HistoryRetention | None = None) -> None:
        self._objects: dict[str, ports.StoredObject] = {}
        self._keys: list[str] = []
        self._versions = itertools.count(1)
        self._history: dict[str, list[ports.VersionRecord]] = {}
        self._retention = retention or ports.HistoryRetention()
        self._changes: dict[str, list[ports.LoggedChange]] = {}
        self._last: dict[str, int] = {}

    async def get(self, key: str) -> ports.StoredObject | None:
        return self._objects.get(key)

    async def put(self, write: ports.Write) -> str:
        key, change = write.key, write.change
        version = write.version or str(next(self._versions))
        if version.isdigit() and version == write.version:
            # A restored number: the counter moves past it, so no later write
            # of the key is given it again.
            self._versions = itertools.count(
                max(int(version), next(self._versions)) + 1
            )
        if key not in self._objects:
            bisect.insort(self._keys, key)
        self._objects[key] = ports.StoredObject(
            bytes(write.data), write.metadata, version
        )
        if change is not None:
            self._record(key, written(version, write, change), change)
        return version

    async def put_if_version(
        self, write: ports.Write, expected: str | None
    ) -> str | None:
        current = self._objects.get(write.key)
        if (current.version if current else None) != expected:
            return None
        return await self.put(write)

    async def delete_if_version(
        self, key: str, expected: str, *, change: ports.Change | None = None
    ) -> bool:
        current = self._objects.get(key)
        if current is None or current.version != expected:
            return False
        del self._objects[key]
        self._keys.pop(bisect.bisect_left(self._keys, key))
        if change is not None:
            version = str(next(self._versions))
            self._record(key, tombstone(version, current.metadata, change), change)
        return True

    async def erase_if_version(self, key: str, expected: str) -> bool:
        current = self._objects.get(key)
        if current is None or current.version != expected:
            return False
        del self._objects[key]
        self._keys.pop(bisect.bisect_left(self._keys, key))
        self._history.pop(key, None)
        return True

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: ports.Change,
    ) -> str | None:
        current, taken = self._objects.get(source), self._objects.get(destination)
        if current is None or current.version != expected:
            return None
        if (taken.version if taken else None) != replacing:
            return None
        del self._objects[source]
        self._keys.pop(bisect.bisect_left(self._keys, source))
        moved = self._history.pop(source, [])
        self._history[destination] = [*self._history.get(destination, ()), *moved]
        version = str(next(self._versions))
        if taken is None:
            bisect.insort(self._keys, destination)
        self._objects[destination] = ports.StoredObject(
            current.data, current.metadata, version
        )
        write = ports.Write(destination, current.data, current.metadata, change)
        self._log(source, version, change)
        self._record(destination, written(version, write, change), change)
        return version

    def _record(
        self, key: str, record: ports.VersionRecord, change: ports.Change
    ) -> None:
        history = self._history.setdefault(key, [])
        history.append(record)
        newest_first = history[::-1]
        for position in expired(newest_first, self._retention, change.at):
            history.remove(newest_first[position])
        self._log(key, record.version, change)

    def _log(self, key: str, version: str, change: ports.Change) -> None:
        prefix = entity_prefix_of_key(key)
        last = self._last.get(prefix)
        seq = first_seq() if last is None else last + 1
        self._last[prefix] = seq
        entry = ports.LoggedChange(
            seq, key, change.operation, change.actor, change.at, version
        )
        log = self._changes.setdefault(prefix, [])
        log.append(entry)
        cutoff = change.at - timedelta(seconds=self._retention.changes_seconds)
        while len(log) > 1 and log[0].at < cutoff:
            del log[0]

    async def changes_after(
        self, prefix: str, after: int, *, now: datetime, limit: int
    ) -> ports.ChangeLogPage:
        since = now - timedelta(seconds=self._retention.changes_seconds)
        kept = [entry for entry in self._changes.get(prefix, ()) if entry.at >= since]
        page = [entry for entry in kept if entry.seq > after][:limit]
        return ports.ChangeLogPage(page, self._last.get(prefix, 0))

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[ports.VersionRecord]:
        newest_first = self._history.get(key, [])[::-1]
        start = 0
        if after is not None:
            versions = [record.version for record in newest_first]
            start = versions.index(after) + 1 if after in versions else len(versions)
        return [without_data(record) for record in newest_first[start : start + limit]]

    async def own_change(self, key: str, call: str) -> ports.VersionRecord | None:
        return None  # a write's outcome is always known

    async def get_version(self, key: str, version: str) -> ports.VersionRecord | None:
        for record in self._history.get(key, ()):
            if record.version == version:
                return record
        return None

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ports.ListedObject]:
        start = bisect.bisect_left(self._keys, prefix)
        if start_after is not None and start_after >= prefix:
            start = bisect.bisect_right(self._keys, start_after)
        page: list[ports.ListedObject] = []
        for key in itertools.islice(self._keys, start, None):
            if not key.startswith(prefix) or len(page) == limit:
                break
            stored = self._objects[key]
            shown = format_timestamp(stored.metadata.last_updated)
            page.append(ports.ListedObject(key, stored.metadata, stored.version, shown))
        return page

    async def count(self, prefix: str) -> int:
        start = bisect.bisect_left(self._keys, prefix)
        count = 0
        for key in itertools.islice(self._keys, start, None):
            if not key.startswith(prefix):
                break
            count += 1
        return count

    async def ping(self) -> None:
        return None

    async def scrub(self, prefix: str) -> None:
        # A deleted object is unreferenced at once; only its history remains.
        for key in [key for key in self._history if key.startswith(prefix)]:
            del self._history[key]
        for entity in [entity for entity in self._changes if entity.startswith(prefix)]:
            del self._changes[entity], self._last[entity]
