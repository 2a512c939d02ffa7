"""Filesystem storage: a body file and a JSON sidecar per object, under a lock file."""

import asyncio
import fcntl
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path
from urllib.parse import unquote

from app.features.memory import ports
from app.infra import durable_files
from app.infra.durable_files import replace_file, sync_directory, write_new
from app.infra.filesystem.change_log import FileChangeLog
from app.infra.filesystem.commits import names_version, tidy
from app.infra.filesystem.history import (
    archive,
    erase_history,
    history_directory,
    scrub_history,
)
from app.infra.filesystem.key_history import KeyHistories
from app.infra.filesystem.layout import (
    body_path,
    make_directories,
    object_location,
    prefix_directory,
    read_record,
    record_document,
    remove_empty,
    scrub_objects,
    sidecar_path,
    walk,
)
from app.infra.filesystem.renames import FileRenames
from app.infra.history_records import tombstone
from app.shared.errors import backend_unavailable_error, outcome_unknown_error

LOCK_NAME = ".lock"
LOCK_TIMEOUT_SECONDS = 10.0


class FilesystemStorage:
    """Objects under ``root``; safe across threads and processes sharing it.

    Replacing the sidecar is the commit: the body it names is written first
    under a fresh name, so a crash never pairs a body with another write's
    metadata (it may leave an unreferenced body behind). Durability: a new
    directory, the body and its name are synced before the sidecar is renamed,
    and the directory after, so a returned write or delete survives power loss.
    Every operation holds ``root/.lock``, shared to read and exclusive to
    write, and runs in a worker thread so neither the disk nor the lock ever
    blocks the event loop. History: ``filesystem_history``; renames: ``renames``.
    """

    def __init__(
        self,
        root: Path,
        *,
        lock_timeout: float = LOCK_TIMEOUT_SECONDS,
        retention: ports.HistoryRetention | None = None,
    ) -> None:
        self._root = root
        retention = retention or ports.HistoryRetention()
        self._history = KeyHistories(root, retention)
        kept = timedelta(seconds=retention.changes_seconds)
        self._changes = FileChangeLog(root, kept, self._history.landed)
        lock = (root / LOCK_NAME, lock_timeout)
        self._renames = FileRenames(root, self._history, self._changes, lock=lock)

    async def _run[T](self, function: Callable[..., T], *arguments: object) -> T:
        try:
            return await asyncio.to_thread(function, *arguments)
        except TimeoutError as exc:
            raise backend_unavailable_error("timeout") from exc
        except OSError as exc:
            raise backend_unavailable_error("unavailable") from exc

    def _locked(self, operation: int) -> AbstractContextManager[None]:
        return self._renames.locked(operation)  # a crashed rename finished first

    def _location(self, key: str) -> tuple[Path, str]:
        return object_location(self._root, key)

    def _get(self, key: str) -> ports.StoredObject | None:
        directory, stem = self._location(key)
        with self._locked(fcntl.LOCK_SH):
            record = read_record(sidecar_path(directory, stem))
            if record is None:
                return None
            entry = record.entry
            data = durable_files.read_file(body_path(directory, stem, entry.version))
        return ports.StoredObject(data, entry.metadata, entry.version)

    def _commit(self, write: ports.Write) -> str:
        """Write the new body, then replace the sidecar; the lock is held."""
        key, change = write.key, write.change
        directory, stem = self._location(key)
        sidecar = sidecar_path(directory, stem)
        current = read_record(sidecar)
        version = write.version or secrets.token_hex(10)
        self._history.archive_current(key, current)
        make_directories(self._root, key)
        body = body_path(directory, stem, version)
        write_new(body, write.data)
        if change is not None:
            self._changes.intend(key, version, change)
        try:
            sync_directory(directory)  # the body's name, before a sidecar names it
            replace_file(sidecar, record_document(key, version, write.metadata, change))
        except OSError as exc:
            if names_version(sidecar, version):
                # Renamed into place, its directory not synced: readers see the
                # write, a crash may undo it.
                raise outcome_unknown_error() from exc
            durable_files.remove_file(body)
            raise
        if current is not None:
            old = body_path(directory, stem, current.entry.version)
            tidy(lambda: durable_files.remove_file(old))
        tidy(lambda: self._history.trim(key, change))
        return version

    def _put(self, write: ports.Write) -> str:
        with self._locked(fcntl.LOCK_EX):
            return self._commit(write)

    def _put_if(self, write: ports.Write, expected: str | None) -> str | None:
        directory, stem = self._location(write.key)
        with self._locked(fcntl.LOCK_EX):
            current = read_record(sidecar_path(directory, stem))
            if (current.entry.version if current else None) != expected:
                return None
            return self._commit(write)

    def _delete(self, key: str, expected: str, change: ports.Change | None) -> bool:
        directory, stem = self._location(key)
        sidecar = sidecar_path(directory, stem)
        with self._locked(fcntl.LOCK_EX):
            current = read_record(sidecar)
            if current is None or current.entry.version != expected:
                return False
            self._history.archive_current(key, current)
            if change is not None:
                dead = tombstone(secrets.token_hex(10), current.entry.metadata, change)
                archive(
                    history_directory(self._root, key), key, dead, current.entry.version
                )
                self._changes.intend(key, dead.version, change)
            os.unlink(sidecar)
            try:
                sync_directory(directory)
            except OSError as exc:
                raise outcome_unknown_error() from exc  # gone now; a crash may undo
            body = body_path(directory, stem, current.entry.version)
            tidy(lambda: durable_files.remove_file(body))
            tidy(lambda: remove_empty(self._root, directory))
            tidy(lambda: self._history.trim(key, change))
        return True

    def _erase(self, key: str, expected: str) -> bool:
        # The history goes first: a crash before the sidecar leaves the file
        # whole (a sweep run again erases it), never history without a file.
        directory, stem = self._location(key)
        sidecar = sidecar_path(directory, stem)
        with self._locked(fcntl.LOCK_EX):
            current = read_record(sidecar)
            if current is None or current.entry.version != expected:
                return False
            self._changes.keep_numbers(key)
            erase_history(self._root, key)
            os.unlink(sidecar)
            sync_directory(directory)
            durable_files.remove_file(body_path(directory, stem, current.entry.version))
            remove_empty(self._root, directory)
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
        move = (source, destination, expected, replacing)
        return await self._run(self._renames.rename, *move, change)

    def _found(self, prefix: str, start_after: str | None) -> Iterator[tuple[str, str]]:
        base = prefix[: prefix.rfind("/") + 1]
        directory = prefix_directory(self._root, base)
        if directory is None or not directory.is_dir():
            return iter(())
        return walk(os.fspath(directory), base, prefix, start_after)

    def _list(
        self, prefix: str, start_after: str | None, limit: int
    ) -> list[ports.ListedObject]:
        with self._locked(fcntl.LOCK_SH):
            page: list[ports.ListedObject] = []
            for _, sidecar in islice(self._found(prefix, start_after), limit):
                record = read_record(sidecar)
                if record is not None:
                    page.append(record.entry)
            return page

    def _count(self, prefix: str) -> int:
        with self._locked(fcntl.LOCK_SH):
            return sum(1 for _ in self._found(prefix, None))

    def _ping(self) -> None:
        with self._locked(fcntl.LOCK_SH):
            return None

    def _scrub(self, prefix: str) -> None:
        """Remove unreferenced bodies and temporaries under ``prefix``, then
        every directory left empty, so no file name or byte of it remains."""
        top = prefix_directory(self._root, prefix)
        if top is None:
            return
        with self._locked(fcntl.LOCK_EX):
            scrub_history(self._root, prefix)
            self._changes.scrub(prefix)
            if not top.is_dir():
                return
            scrub_objects(self._root, top)

    async def get(self, key: str) -> ports.StoredObject | None:
        return await self._run(self._get, key)

    async def put(self, write: ports.Write) -> str:
        return await self._run(self._put, write)

    async def put_if_version(
        self, write: ports.Write, expected: str | None
    ) -> str | None:
        return await self._run(self._put_if, write, expected)

    async def delete_if_version(
        self, key: str, expected: str, *, change: ports.Change | None = None
    ) -> bool:
        return await self._run(self._delete, key, expected, change)

    async def erase_if_version(self, key: str, expected: str) -> bool:
        return await self._run(self._erase, key, expected)

    def _versions(
        self, key: str, after: str | None, limit: int
    ) -> list[ports.VersionRecord]:
        with self._locked(fcntl.LOCK_SH):
            return self._history.versions(key, after, limit)

    def _version(self, key: str, version: str) -> ports.VersionRecord | None:
        with self._locked(fcntl.LOCK_SH):
            return self._history.version(key, version)

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[ports.VersionRecord]:
        return await self._run(self._versions, key, after, limit)

    async def own_change(self, key: str, call: str) -> ports.VersionRecord | None:
        return None  # a sidecar names its change, not the call's key

    async def get_version(self, key: str, version: str) -> ports.VersionRecord | None:
        return await self._run(self._version, key, version)

    def _change_page(
        self, prefix: str, after: int, now: datetime, limit: int
    ) -> ports.ChangeLogPage:
        with self._locked(fcntl.LOCK_SH):
            return self._changes.page(prefix, after, now, limit)

    async def changes_after(
        self, prefix: str, after: int, *, now: datetime, limit: int
    ) -> ports.ChangeLogPage:
        return await self._run(self._change_page, prefix, after, now, limit)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ports.ListedObject]:
        return await self._run(self._list, prefix, start_after, limit)

    async def count(self, prefix: str) -> int:
        return await self._run(self._count, prefix)

    async def ping(self) -> None:
        await self._run(self._ping)

    async def scrub(self, prefix: str) -> None:
        await self._run(self._scrub, prefix)


def filesystem_root(url: str) -> Path:
    """The directory of a ``file:///dir`` storage URL."""
    return Path(unquote(url.removeprefix("file://")))
