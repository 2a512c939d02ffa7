"""Per-entity change markers kept in the backend, shared by every process.

Every write, import and purge replaces its entity's marker before it returns;
an index cache serves a listing only while the marker it was read under is
still current. So a write through one process, or a purge run by the CLI, is
seen at once by every other process on the same backend, whatever the cache.
A marker is keyed by a digest of the entity prefix and holds a random token:
it names no entity and holds no content, so a purge leaves nothing behind.

On SQLite every file change replaces the marker itself, in its own transaction
(``sqlite_writes`` runs ``BUMP``): the marker commits with the write, never
apart from it, and a write costs no second commit. Such markers say so
(``moved_by_writes``), and the index cache's invalidation after a call's own
write (``IndexCache.invalidate(..., after_write=True)``) then leaves them be.
"""

import functools
import hashlib
import secrets
import sqlite3
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Protocol

import aiosqlite

from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.ports import FileMetadata, Storage, Write
from app.infra.sqlite.connection import (
    fetch_rows,
    open_sqlite_connection,
    translate_sqlite_error,
)
from app.infra.sqlite.point_reads import PointReads, open_point_reads

MARKER_KEYS = "%changes/"
"""Where markers live beside the files when the storage keeps them; no entity
prefix (scope/entity/) starts with it, so no listing or purge ever sees them."""
INITIAL = "0"
_MARKER_META = FileMetadata("", (), (), datetime(2000, 1, 1, tzinfo=UTC))


class ChangeMarkers(Protocol):
    @property
    def moved_by_writes(self) -> bool:
        """Whether every file change of the storage replaces its marker itself."""
        ...

    async def read(self, prefix: str) -> str:
        """The current marker of ``prefix`` (INITIAL before its first change)."""
        ...

    async def bump(self, prefix: str) -> None:
        """Replace the marker with one never used before for ``prefix``."""
        ...


@functools.lru_cache(maxsize=4096)
def marker_id(prefix: str) -> str:
    # Memoised: every write asks for its entity's, the same few.
    return hashlib.sha256(prefix.encode()).hexdigest()


def marker_of_key(key: str) -> str:
    """The marker id of the entity ``key`` belongs to."""
    return marker_id(entity_prefix_of_key(key))


class ProcessChangeMarkers:
    """Markers of this process only: for in-memory storage and unit tests."""

    moved_by_writes = False

    def __init__(self) -> None:
        self._markers: dict[str, str] = {}

    async def read(self, prefix: str) -> str:
        return self._markers.get(marker_id(prefix), INITIAL)

    async def bump(self, prefix: str) -> None:
        self._markers[marker_id(prefix)] = new_marker()


class StorageChangeMarkers:
    """Markers as small objects in the storage itself: the version is the marker."""

    moved_by_writes = False

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def read(self, prefix: str) -> str:
        found = await self._storage.get(MARKER_KEYS + marker_id(prefix))
        return INITIAL if found is None else found.version

    async def bump(self, prefix: str) -> None:
        await self._storage.put(
            Write(MARKER_KEYS + marker_id(prefix), b"", _MARKER_META)
        )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS change_markers (
    id TEXT PRIMARY KEY,
    marker TEXT NOT NULL
) WITHOUT ROWID
"""
_READ = "SELECT marker FROM change_markers WHERE id = ?"
BUMP = (
    "INSERT INTO change_markers (id, marker) VALUES (?, ?) "
    "ON CONFLICT (id) DO UPDATE SET marker = excluded.marker"
)
"""Replaces one marker: its id (``marker_id``) and a new random token."""


def new_marker() -> str:
    return secrets.token_hex(12)


async def prepare_markers(connection: aiosqlite.Connection) -> None:
    """Create the markers table in the storage database when missing."""
    try:
        await connection.executescript(_SCHEMA)
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


class SqliteChangeMarkers:
    """Markers in their own table of the memory database (one statement each)."""

    moved_by_writes = True
    """``SqliteStorage`` replaces a file's marker in the file's own transaction."""

    def __init__(self, connection: aiosqlite.Connection, reads: PointReads) -> None:
        self._db = connection
        # A marker read is one primary-key lookup: on the loop's thread, no hop
        # (a conditional index reads one per granted entity and nothing else).
        self._reads = reads

    async def _rows(
        self, sql: str, parameters: tuple[object, ...]
    ) -> list[sqlite3.Row]:
        # Execute, fetch and close in one trip: a read left open between trips
        # pins its snapshot, and a bump queued behind it then fails at once with
        # "database is locked" (no busy wait) once another connection committed.
        return await fetch_rows(self._db, sql, parameters)

    async def read(self, prefix: str) -> str:
        rows = await self._reads.fetch(_READ, (marker_id(prefix),))
        return str(rows[0][0]) if rows else INITIAL

    async def bump(self, prefix: str) -> None:
        await self._rows(BUMP, (marker_id(prefix), new_marker()))


@asynccontextmanager
async def open_sqlite_change_markers(path: str) -> AsyncGenerator[SqliteChangeMarkers]:
    # A marker lost to a power cut is harmless: every process's cache went too
    # (a write's own marker commits with the write, at its durability).
    async with open_sqlite_connection(
        path, schema=_SCHEMA, synchronous="normal"
    ) as connection:
        with open_point_reads(path, connection) as reads:
            yield SqliteChangeMarkers(connection, reads)
