"""Webhook endpoints as files: one JSON document per endpoint under ``.webhooks/``.

Each document holds the endpoint and a version number; every change takes the
directory's exclusive ``flock`` and replaces the document atomically (written,
synced, renamed), so processes sharing the directory swap versions one at a
time and a crash leaves the old document or the new one, never half of one.
"""

import asyncio
import fcntl
import json
import os
import re
from pathlib import Path

from app.features.webhooks.domain import Endpoint, Stored
from app.infra.durable_files import read_file, remove_file, replace_file, sync_directory
from app.infra.filesystem.lock import storage_lock
from app.infra.webhook_records import endpoint_json, endpoint_of

LOCK_TIMEOUT = 10.0
DIRECTORY = ".webhooks"
_ID = re.compile(r"^wh_[0-9a-f]{24}$")


class FileWebhookStore:
    def __init__(self, root: Path) -> None:
        self._directory = root / DIRECTORY
        self._lock = self._directory / ".lock"

    def _path(self, endpoint_id: str) -> str | None:
        # Ids come from callers too (remove): only the form we issue names a file.
        # A str: an id per endpoint (see app.infra.durable_files).
        if not _ID.match(endpoint_id):
            return None
        return os.path.join(self._directory, f"{endpoint_id}.json")

    def _documents(self) -> list[str]:
        names = sorted(os.listdir(self._directory))
        return [
            os.path.join(self._directory, name)
            for name in names
            if name.startswith("wh_") and name.endswith(".json")
        ]

    def _read(self, path: str) -> Stored | None:
        try:
            document = json.loads(read_file(path))
        except FileNotFoundError:
            return None
        endpoint = endpoint_of(json.dumps(document["record"]))
        return Stored(endpoint, str(document["version"]))

    def _write(self, endpoint: Endpoint, version: int) -> None:
        path = self._path(endpoint.id)
        assert path is not None
        record = json.loads(endpoint_json(endpoint))
        document = json.dumps({"version": version, "record": record}).encode()
        replace_file(path, document, mode=0o600)

    def _create(self, endpoint: Endpoint) -> None:
        self._directory.mkdir(parents=True, exist_ok=True)
        with storage_lock(self._lock, fcntl.LOCK_EX, LOCK_TIMEOUT):
            self._write(endpoint, 1)

    def _listing(self, prefix: str | None) -> list[Stored]:
        if not self._directory.is_dir():
            return []
        with storage_lock(self._lock, fcntl.LOCK_SH, LOCK_TIMEOUT):
            found = (self._read(p) for p in self._documents())
            return [
                s
                for s in found
                if s and (prefix is None or s.endpoint.prefix == prefix)
            ]

    def _swap(self, endpoint: Endpoint, expected: str) -> str | None:
        path = self._path(endpoint.id)
        if path is None or not self._directory.is_dir():
            return None
        with storage_lock(self._lock, fcntl.LOCK_EX, LOCK_TIMEOUT):
            current = self._read(path)
            if current is None or current.version != expected:
                return None
            self._write(endpoint, int(expected) + 1)
            return str(int(expected) + 1)

    def _remove(self, prefix: str | None, endpoint_id: str | None) -> bool:
        if not self._directory.is_dir():
            return False
        with storage_lock(self._lock, fcntl.LOCK_EX, LOCK_TIMEOUT):
            removed = False
            for stored in self._listing_locked():
                endpoint = stored.endpoint
                if endpoint_id not in (None, endpoint.id) or (
                    prefix is not None and endpoint.prefix != prefix
                ):
                    continue
                path = self._path(endpoint.id)
                if path is not None:
                    remove_file(path)
                    removed = True
            sync_directory(self._directory)
            return removed

    def _listing_locked(self) -> list[Stored]:
        found = (self._read(p) for p in self._documents())
        return [s for s in found if s is not None]

    async def create(self, endpoint: Endpoint) -> None:
        await asyncio.to_thread(self._create, endpoint)

    async def listing(self, prefix: str | None) -> list[Stored]:
        return await asyncio.to_thread(self._listing, prefix)

    async def swap(self, endpoint: Endpoint, expected: str) -> str | None:
        return await asyncio.to_thread(self._swap, endpoint, expected)

    async def remove(self, prefix: str, endpoint_id: str) -> bool:
        return await asyncio.to_thread(self._remove, prefix, endpoint_id)

    async def erase(self, prefix: str) -> None:
        await asyncio.to_thread(self._remove, prefix, None)
