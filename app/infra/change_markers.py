"""Per-entity change markers kept in the backend, shared by every process.

Every write, import and purge replaces its entity's marker before it returns;
an index cache serves a listing only while the marker it was read under is
still current. So a write through one process, or a purge run by the CLI, is
seen at once by every other process on the same backend, whatever the cache.
A marker is keyed by a digest of the entity prefix and holds a random token:
it names no entity and holds no content, so a purge leaves nothing behind.

On SQLite the storage connection's triggers replace the marker inside the very
statement that changes a file (``prepare_markers``): the marker commits with
the write, never apart from it, and a write costs no second commit. The bump
the write's call makes afterwards is then skipped (``note_marked``).
"""

import functools
import hashlib
import os
import secrets
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Protocol

import aiosqlite

from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.ports import FileMetadata, Storage, Write

from .sqlite_connection import fetch_rows, install_triggers, open_sqlite_connection
from .sqlite_point_reads import PointReads, open_point_reads

MARKER_KEYS = "%changes/"
"""Where markers live beside the files when the storage keeps them; no entity
prefix (scope/entity/) starts with it, so no listing or purge ever sees them."""
INITIAL = "0"
_MARKER_META = FileMetadata("", (), (), datetime(2000, 1, 1, tzinfo=UTC))


class ChangeMarkers(Protocol):
    async def read(self, prefix: str) -> str:
        """The current marker of ``prefix`` (INITIAL before its first change)."""
        ...

    async def bump(self, prefix: str) -> None:
        """Replace the marker with one never used before for ``prefix``."""
        ...


@functools.lru_cache(maxsize=4096)
def marker_id(prefix: str) -> str:
    # Memoised: every write's trigger asks for its entity's, the same few.
    return hashlib.sha256(prefix.encode()).hexdigest()


def _of_key(key: str) -> str:
    return marker_id(entity_prefix_of_key(key))


class ProcessChangeMarkers:
    """Markers of this process only: for in-memory storage and unit tests."""

    def __init__(self) -> None:
        self._markers: dict[str, str] = {}

    async def read(self, prefix: str) -> str:
        return self._markers.get(marker_id(prefix), INITIAL)

    async def bump(self, prefix: str) -> None:
        self._markers[marker_id(prefix)] = secrets.token_hex(12)


class StorageChangeMarkers:
    """Markers as small objects in the storage itself: the version is the marker."""

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
_BUMP = (
    "INSERT INTO change_markers (id, marker) VALUES (?, ?) "
    "ON CONFLICT (id) DO UPDATE SET marker = excluded.marker"
)


_FUNCTION = "wenchang_marker_id"
_MARK = (
    f"INSERT INTO change_markers (id, marker) VALUES ({_FUNCTION}({{row}}.key), "
    "lower(hex(randomblob(12)))) "
    "ON CONFLICT (id) DO UPDATE SET marker = excluded.marker;"
)
_TRIGGERS = (
    "DROP TRIGGER IF EXISTS temp.marker_on_insert",
    "DROP TRIGGER IF EXISTS temp.marker_on_update",
    "DROP TRIGGER IF EXISTS temp.marker_on_delete",
    "CREATE TEMP TRIGGER marker_on_insert AFTER INSERT ON memory_objects "
    f"BEGIN {_MARK.format(row='NEW')} END",
    "CREATE TEMP TRIGGER marker_on_update AFTER UPDATE ON memory_objects "
    f"BEGIN {_MARK.format(row='NEW')} END",
    "CREATE TEMP TRIGGER marker_on_delete AFTER DELETE ON memory_objects "
    f"BEGIN {_MARK.format(row='OLD')} END",
)


async def prepare_markers(connection: aiosqlite.Connection) -> None:
    """Make every change this connection makes to a file replace its marker."""
    await install_triggers(connection, _SCHEMA, _TRIGGERS, (_FUNCTION, 1, _of_key))


_MARKED: ContextVar[frozenset[str]] = ContextVar("marked", default=frozenset())
"""Entities (with their database) a statement of the current call re-marked."""


def database_id(path: str) -> str:
    return os.path.realpath(path) + "\0"


def note_marked(database: str, key: str) -> None:
    """A statement of this call changed ``key`` in ``database`` (see ``database_id``)
    and its triggers replaced the entity's marker."""
    _MARKED.set(_MARKED.get() | {database + entity_prefix_of_key(key)})


def _take_marked(database: str, prefix: str) -> bool:
    marked = _MARKED.get()
    if database + prefix not in marked:
        return False
    _MARKED.set(marked - {database + prefix})
    return True


class SqliteChangeMarkers:
    """Markers in their own table of the memory database (one statement each)."""

    def __init__(
        self, connection: aiosqlite.Connection, database: str, reads: PointReads
    ) -> None:
        self._db = connection
        self._database = database
        # A marker read is one primary-key lookup: on the loop's thread, no hop
        # (a conditional index reads one per granted entity and nothing else).
        self._reads = reads

    async def _rows(self, sql: str, parameters: tuple[Any, ...]) -> list[Any]:
        # Execute, fetch and close in one trip: a read left open between trips
        # pins its snapshot, and a bump queued behind it then fails at once with
        # "database is locked" (no busy wait) once another connection committed.
        return await fetch_rows(self._db, sql, parameters)

    async def read(self, prefix: str) -> str:
        rows = await self._reads.fetch(_READ, (marker_id(prefix),))
        return str(rows[0][0]) if rows else INITIAL

    async def bump(self, prefix: str) -> None:
        # After the call's own write its statement already replaced the marker.
        if not _take_marked(self._database, prefix):
            await self._rows(_BUMP, (marker_id(prefix), secrets.token_hex(12)))


@asynccontextmanager
async def open_sqlite_change_markers(path: str) -> AsyncGenerator[SqliteChangeMarkers]:
    # A marker lost to a power cut is harmless: every process's cache went too
    # (a write's own marker commits with the write, at its durability).
    async with open_sqlite_connection(
        path, schema=_SCHEMA, synchronous="normal"
    ) as connection:
        with open_point_reads(path, connection) as reads:
            yield SqliteChangeMarkers(connection, database_id(path), reads)
