"""GCS storage: object generations are versions; every mutation is guarded by one.

Version history is kept as ``gcs_history`` describes.
"""

import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

import aiohttp

from app.features.memory import ports
from app.infra.gcs.change_log import GcsChangeLog
from app.infra.gcs.client import GcsClient
from app.infra.gcs.deletes import GcsDeletes
from app.infra.gcs.history import (
    NAME_LIMIT,
    GcsHistory,
    change_map,
    generation_of,
    is_tombstone,
    is_tracked,
    require_metadata_room,
)
from app.infra.gcs.listing import LIST_BATCH, GcsListing
from app.infra.gcs.location import GcsLocation, parse_gcs_url
from app.infra.gcs.logged_writes import LoggedWrite
from app.infra.gcs.objects import GcsObjects
from app.infra.gcs.renames import GcsRenames
from app.infra.gcs.resources import ObjectResource
from app.infra.history_records import without_data, written
from app.infra.object_metadata import metadata_from_map
from app.shared.errors import backend_unavailable_error

READ_ATTEMPTS = 3
WRITE_ATTEMPTS = 5
SCRUB_FIELDS = "items(name,generation,timeDeleted,metadata),nextPageToken"

OWN_LOOKBACK = 20
"""How many of a file's newest records a repeated call searches for its own write."""

logger = logging.getLogger(__name__)


class GcsStorage:
    """One bucket (and optional key prefix) as a Storage; GcsObjects retries."""

    def __init__(
        self,
        client: GcsClient,
        location: GcsLocation,
        *,
        retention: ports.HistoryRetention | None = None,
        pending_seconds: float | None = None,
    ) -> None:
        self._objects = GcsObjects(client, location)
        self._prefix = location.prefix
        retention = retention or ports.HistoryRetention()
        self._history = GcsHistory(self._objects, location.prefix, retention)
        self._log = GcsChangeLog(
            self._objects,
            location.prefix,
            timedelta(seconds=retention.changes_seconds),
            archive_prefix=self._history.key_prefix,
        )
        self._writes = GcsDeletes(
            self._objects, self._history, location.prefix, location.timeout
        )
        self._renames = GcsRenames(
            self._objects,
            self._history,
            self._writes,
            self._log,
            location.prefix,
            timeout=location.timeout,
            pending_seconds=pending_seconds,
        )
        self._listing = GcsListing(self._objects, location.prefix, self._renames)

    async def _live(self, key: str) -> ObjectResource | None:
        if len((self._prefix + key).encode()) > NAME_LIMIT:
            return None  # no object can have this name
        described = await self._renames.current(key)
        return None if described is None or is_tombstone(described) else described

    async def get(self, key: str) -> ports.StoredObject | None:
        name = self._prefix + key
        for _ in range(READ_ATTEMPTS):
            described = await self._live(key)
            if described is None:
                return None
            generation = str(described["generation"])
            data = await self._objects.download(name, generation)
            if data is None:
                continue
            metadata = metadata_from_map(described.get("metadata") or {})
            return ports.StoredObject(data, metadata, generation)
        logger.warning("GCS object kept changing while being read")
        raise backend_unavailable_error("unavailable")

    async def _archive(self, key: str, current: ObjectResource) -> bool:
        """Archive ``current``'s record before replacing it; False if it changed."""
        if not is_tracked(current):
            return True
        data = b""
        if not is_tombstone(current):
            generation = str(current["generation"])
            found = await self._objects.download(self._prefix + key, generation)
            if found is None:
                return False
            data = found
        await self._history.archive(key, current, data)
        return True

    async def _replace(
        self,
        key: str,
        data: bytes,
        values: dict[str, str],
        current: ObjectResource,
        logged: LoggedWrite,
    ) -> str | None:
        if not await self._archive(key, current):
            return None
        values = values | await logged.stamp(current)
        return await self._writes.upload(key, data, values, str(current["generation"]))

    async def _create(
        self, key: str, data: bytes, values: dict[str, str], logged: LoggedWrite
    ) -> str | None:
        values = values | await logged.stamp(None)
        return await self._writes.upload(key, data, values, "0")

    async def _landed(
        self, write: ports.Write, version: str | None, logged: LoggedWrite
    ) -> str | None:
        await logged.end(version)
        change = write.change
        if version is not None and change is not None:
            newest = written(version, write, change)
            await self._history.prune(write.key, without_data(newest), change.at)
        return version

    def _values(self, write: ports.Write) -> dict[str, str]:
        """The custom metadata of ``write``, refused if GCS could not hold it."""
        self._history.require_room(write.key)
        values = change_map(write.metadata, write.change)
        require_metadata_room(values)
        return values

    async def put(self, write: ports.Write) -> str:
        key, data = write.key, write.data
        values = self._values(write)
        logged = LoggedWrite(self._log, key, write.change)
        for _ in range(WRITE_ATTEMPTS):
            current = await self._renames.current(key, wait=True)
            if current is None:
                version = await self._create(key, data, values, logged)
            else:
                version = await self._replace(key, data, values, current, logged)
            if version is not None:
                return await self._landed(write, version, logged) or version
        await logged.end(None)
        raise backend_unavailable_error("unavailable")

    async def put_if_version(
        self, write: ports.Write, expected: str | None
    ) -> str | None:
        key, data = write.key, write.data
        values = self._values(write)
        logged = LoggedWrite(self._log, key, write.change)
        if expected is None:
            version = await self._create(key, data, values, logged)
            if version is None:
                # Only a tombstone left by a delete, or a rename rolled back,
                # may stand where a create goes.
                current = await self._renames.current(key, wait=True)
                if current is None:
                    version = await self._create(key, data, values, logged)
                elif is_tombstone(current):
                    version = await self._replace(key, data, values, current, logged)
        else:
            current = await self._live(key)
            if current is not None and str(current["generation"]) == generation_of(
                expected
            ):
                version = await self._replace(key, data, values, current, logged)
            else:
                version = None
        return await self._landed(write, version, logged)

    async def delete_if_version(
        self, key: str, expected: str, *, change: ports.Change | None = None
    ) -> bool:
        current = await self._live(key)
        if current is None:
            return False
        if str(current["generation"]) != generation_of(expected):
            return False
        if not await self._archive(key, current):
            return False
        logged = LoggedWrite(self._log, key, change)
        stamp = await logged.stamp(current)
        version = await self._writes.remove(key, current, change, stamp)
        await logged.end(version)
        return version is not None

    async def rename_if_version(
        self,
        source: str,
        destination: str,
        expected: str,
        *,
        replacing: str | None,
        change: ports.Change,
    ) -> str | None:
        move = (source, destination, expected, replacing)
        return await self._renames.rename(*move, change)

    async def erase_if_version(self, key: str, expected: str) -> bool:
        # A purge's tombstone replaces the object only at ``expected``
        # (ifGenerationMatch, its outcome resolved as every write's), then every
        # generation of the name that is not live goes, with the key's archive.
        current = await self._live(key)
        if current is None or str(current["generation"]) != generation_of(expected):
            return False
        if not await self._writes.remove(key, current, None):
            return False
        await self._writes.erase_leftovers(key)
        return True

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[ports.VersionRecord]:
        return await self._history.versions(key, after=after, limit=limit)

    async def changes_after(
        self, prefix: str, after: int, *, now: datetime, limit: int
    ) -> ports.ChangeLogPage:
        return await self._log.page(prefix, after, now, limit)

    async def own_change(self, key: str, call: str) -> ports.VersionRecord | None:
        # A write's call is in its metadata (``gcs_history``): a repeated call
        # whose first attempt's outcome was unknown finds what that attempt did.
        if not call:
            return None
        records = await self.list_versions(key, after=None, limit=OWN_LOOKBACK)
        for record in records:
            if record.call == call:
                return await self.get_version(key, record.version)
        return None

    async def get_version(self, key: str, version: str) -> ports.VersionRecord | None:
        return await self._history.version(key, version)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ports.ListedObject]:
        return await self._listing.page(prefix, start_after=start_after, limit=limit)

    async def count(self, prefix: str) -> int:
        return await self._listing.count(prefix)

    async def ping(self) -> None:
        # Listing needs only storage.objects.list, which roles/storage.objectUser
        # grants; reading the bucket itself would need more.
        await self._objects.list({"prefix": self._prefix, "maxResults": "1"})

    async def scrub(self, prefix: str) -> None:
        # With object versioning on, a delete leaves a noncurrent generation
        # (it has timeDeleted); those are erased, with any tombstone and every
        # archived record. A bucket's soft-delete retention is outside what the
        # API can erase: disable it for purges.
        params = {"prefix": self._prefix + prefix, "versions": "true"}
        params |= {"fields": SCRUB_FIELDS, "maxResults": str(LIST_BATCH)}
        async for item in self._objects.items(params):
            if item.get("timeDeleted") or is_tombstone(item):
                await self._objects.erase(str(item["name"]), str(item["generation"]))
        await self._history.scrub(prefix)
        await self._log.scrub(prefix)


@asynccontextmanager
async def open_gcs_storage(
    url: str, *, retention: ports.HistoryRetention | None = None
) -> AsyncGenerator[GcsStorage]:
    """A GcsStorage for ``url`` with its own HTTP session, closed on exit.

    Credentials come from the standard Google environment
    (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default credentials,
    or the metadata server); STORAGE_EMULATOR_HOST points at an emulator.
    """
    location = parse_gcs_url(url)
    timeout = aiohttp.ClientTimeout(total=location.timeout)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        yield GcsStorage(GcsClient(session=session), location, retention=retention)
