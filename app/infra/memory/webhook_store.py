"""Webhook endpoints in this process (tests, memory:// storage)."""

from dataclasses import dataclass

from app.features.webhooks.domain import Endpoint, Stored


@dataclass(slots=True)
class _Entry:
    endpoint: Endpoint
    version: int


class MemoryWebhookStore:
    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._versions = 0

    def _next(self) -> int:
        self._versions += 1
        return self._versions

    async def create(self, endpoint: Endpoint) -> None:
        self._entries[endpoint.id] = _Entry(endpoint, self._next())

    async def listing(self, prefix: str | None) -> list[Stored]:
        return [
            Stored(entry.endpoint, str(entry.version))
            for _, entry in sorted(self._entries.items())
            if prefix is None or entry.endpoint.prefix == prefix
        ]

    async def swap(self, endpoint: Endpoint, expected: str) -> str | None:
        entry = self._entries.get(endpoint.id)
        if entry is None or str(entry.version) != expected:
            return None
        entry.endpoint, entry.version = endpoint, self._next()
        return str(entry.version)

    async def remove(self, prefix: str, endpoint_id: str) -> bool:
        entry = self._entries.get(endpoint_id)
        if entry is None or entry.endpoint.prefix != prefix:
            return False
        del self._entries[endpoint_id]
        return True

    async def erase(self, prefix: str) -> None:
        for endpoint_id, entry in list(self._entries.items()):
            if entry.endpoint.prefix == prefix:
                del self._entries[endpoint_id]
