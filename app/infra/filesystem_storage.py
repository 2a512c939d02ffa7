"""Filesystem storage: a body file and a JSON sidecar per object, under a lock file."""

import asyncio
import fcntl
import json
import os
import secrets
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from urllib.parse import unquote

from app.features.memory.ports import FileMetadata, ListedObject, StoredObject
from app.infra.filesystem_layout import (
    HASHED,
    SEGMENT_FILE,
    SIDECAR,
    encode_segment,
    read_record,
    replace_file,
    sync_directory,
    walk,
    write_new,
)
from app.infra.object_metadata import metadata_to_map
from app.shared.errors import backend_unavailable_error

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
    blocks the event loop.
    """

    def __init__(
        self, root: Path, *, lock_timeout: float = LOCK_TIMEOUT_SECONDS
    ) -> None:
        self._root = root
        self._lock_timeout = lock_timeout

    async def _run[T](self, function: Callable[..., T], *arguments: object) -> T:
        try:
            return await asyncio.to_thread(function, *arguments)
        except TimeoutError as exc:
            raise backend_unavailable_error("timeout") from exc
        except OSError as exc:
            raise backend_unavailable_error("unavailable") from exc

    @contextmanager
    def _locked(self, operation: int) -> Generator[None]:
        descriptor = os.open(self._root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline, delay = time.monotonic() + self._lock_timeout, 0.001
            while True:
                try:
                    fcntl.flock(descriptor, operation | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError("storage lock held too long") from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
            yield
        finally:
            os.close(descriptor)

    def _location(self, key: str) -> tuple[Path, str]:
        *directories, name = key.split("/")
        return self._root.joinpath(*map(encode_segment, directories)), encode_segment(
            name
        )

    def _make_directories(self, key: str) -> None:
        directory = self._root
        for segment in key.split("/")[:-1]:
            directory = directory / encode_segment(segment)
            if not directory.is_dir():
                directory.mkdir()
                sync_directory(directory.parent)
                if HASHED in directory.name:
                    replace_file(directory / SEGMENT_FILE, segment.encode())

    def _prune(self, directory: Path) -> None:
        while directory != self._root:
            names = os.listdir(directory)
            if names not in ([], [SEGMENT_FILE]):
                return
            for name in names:
                (directory / name).unlink()
            directory.rmdir()
            directory = directory.parent

    def _get(self, key: str) -> StoredObject | None:
        directory, stem = self._location(key)
        with self._locked(fcntl.LOCK_SH):
            record = read_record(directory / f"{stem}{SIDECAR}")
            if record is None:
                return None
            data = (directory / f"{stem}%{record.version}").read_bytes()
        return StoredObject(data, record.metadata, record.version)

    def _commit(self, key: str, data: bytes, metadata: FileMetadata) -> str:
        """Write the new body, then replace the sidecar; the lock is held."""
        directory, stem = self._location(key)
        sidecar = directory / f"{stem}{SIDECAR}"
        current, version = read_record(sidecar), secrets.token_hex(10)
        document = {
            "key": key,
            "version": version,
            "metadata": metadata_to_map(metadata),
        }
        self._make_directories(key)
        body = directory / f"{stem}%{version}"
        write_new(body, data)
        try:
            sync_directory(directory)  # the body's name, before a sidecar names it
            replace_file(sidecar, json.dumps(document).encode())
        except OSError:
            body.unlink(missing_ok=True)
            raise
        if current is not None:
            (directory / f"{stem}%{current.version}").unlink(missing_ok=True)
        return version

    def _put(self, key: str, data: bytes, metadata: FileMetadata) -> str:
        with self._locked(fcntl.LOCK_EX):
            return self._commit(key, data, metadata)

    def _put_if(
        self, key: str, data: bytes, metadata: FileMetadata, expected: str | None
    ) -> str | None:
        directory, stem = self._location(key)
        with self._locked(fcntl.LOCK_EX):
            current = read_record(directory / f"{stem}{SIDECAR}")
            if (current.version if current else None) != expected:
                return None
            return self._commit(key, data, metadata)

    def _delete(self, key: str, expected: str) -> bool:
        directory, stem = self._location(key)
        sidecar = directory / f"{stem}{SIDECAR}"
        with self._locked(fcntl.LOCK_EX):
            current = read_record(sidecar)
            if current is None or current.version != expected:
                return False
            sidecar.unlink()
            sync_directory(directory)
            (directory / f"{stem}%{current.version}").unlink(missing_ok=True)
            self._prune(directory)
        return True

    def _found(
        self, prefix: str, start_after: str | None
    ) -> Iterator[tuple[str, Path]]:
        base = prefix[: prefix.rfind("/") + 1]
        if "" in base.split("/")[:-1]:
            return iter(())
        directory = self._root.joinpath(*map(encode_segment, base.split("/")[:-1]))
        if not directory.is_dir():
            return iter(())
        return walk(directory, base, prefix, start_after)

    def _list(
        self, prefix: str, start_after: str | None, limit: int
    ) -> list[ListedObject]:
        with self._locked(fcntl.LOCK_SH):
            page: list[ListedObject] = []
            for key, sidecar in islice(self._found(prefix, start_after), limit):
                record = read_record(sidecar)
                if record is not None:
                    page.append(ListedObject(key, record.metadata, record.version))
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
        segments = prefix.split("/")[:-1]
        if "" in segments:
            return
        top = self._root.joinpath(*map(encode_segment, segments))
        with self._locked(fcntl.LOCK_EX):
            if not top.is_dir():
                return
            for directory, _, names in os.walk(top, topdown=False):
                here = Path(directory)
                kept = {SEGMENT_FILE}
                for name in names:
                    record = (
                        read_record(here / name) if name.endswith(SIDECAR) else None
                    )
                    if record is not None:
                        stem = name[: -len(SIDECAR)]
                        kept |= {name, f"{stem}%{record.version}"}
                for name in set(names) - kept:
                    (here / name).unlink()
                if here.exists():
                    self._prune(here)

    async def get(self, key: str) -> StoredObject | None:
        return await self._run(self._get, key)

    async def put(self, key: str, data: bytes, metadata: FileMetadata) -> str:
        return await self._run(self._put, key, data, metadata)

    async def put_if_version(
        self, key: str, data: bytes, metadata: FileMetadata, expected: str | None
    ) -> str | None:
        return await self._run(self._put_if, key, data, metadata, expected)

    async def delete_if_version(self, key: str, expected: str) -> bool:
        return await self._run(self._delete, key, expected)

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
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
