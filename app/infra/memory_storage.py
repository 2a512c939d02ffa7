"""In-memory storage for tests and trials; a real adapter of the Storage port."""

import bisect
import itertools
from collections.abc import Sequence

from app.features.memory.ports import FileMetadata, ListedObject, StoredObject


class MemoryStorage:
    """One process, one event loop: no method awaits, so each is atomic."""

    def __init__(self) -> None:
        self._objects: dict[str, StoredObject] = {}
        self._keys: list[str] = []
        self._versions = itertools.count(1)

    async def get(self, key: str) -> StoredObject | None:
        return self._objects.get(key)

    async def put(self, key: str, data: bytes, metadata: FileMetadata) -> str:
        version = str(next(self._versions))
        if key not in self._objects:
            bisect.insort(self._keys, key)
        self._objects[key] = StoredObject(bytes(data), metadata, version)
        return version

    async def put_if_version(
        self, key: str, data: bytes, metadata: FileMetadata, expected: str | None
    ) -> str | None:
        current = self._objects.get(key)
        if (current.version if current else None) != expected:
            return None
        return await self.put(key, data, metadata)

    async def delete_if_version(self, key: str, expected: str) -> bool:
        current = self._objects.get(key)
        if current is None or current.version != expected:
            return False
        del self._objects[key]
        self._keys.pop(bisect.bisect_left(self._keys, key))
        return True

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        start = bisect.bisect_left(self._keys, prefix)
        if start_after is not None and start_after >= prefix:
            start = bisect.bisect_right(self._keys, start_after)
        page: list[ListedObject] = []
        for key in itertools.islice(self._keys, start, None):
            if not key.startswith(prefix) or len(page) == limit:
                break
            stored = self._objects[key]
            page.append(ListedObject(key, stored.metadata, stored.version))
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
        # A deleted object is unreferenced at once; nothing here keeps its bytes.
        return None
