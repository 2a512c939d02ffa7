"""An edit of one SQLite row in one trip to the write connection's thread.

The job reads the row, applies the caller's pure edit and writes the result
guarded by the version it read, then runs what lands with it
(``sqlite_writes.Landing``); the batch holds ``BEGIN IMMEDIATE``, so no other
process writes between the read and the write, and the compare-and-swap
still guards the row.
"""

import sqlite3
from collections.abc import Callable

from app.features.audit.ports import PendingEvent
from app.features.memory.ports import StoredObject, Write
from app.infra.sqlite.rows import COLUMNS, stored_from, written_values
from app.infra.sqlite.writes import INSERT_NEW, UPDATE_AT, Landing

GET = f"SELECT data, {COLUMNS} FROM memory_objects WHERE key = ?"

type Edit = Callable[[StoredObject | None], Write]


class EditJob:
    """One edit of ``key`` as a group-commit job; ``write`` is what it stored."""

    __slots__ = ("_edit", "_landing", "claimed", "key", "version", "write")

    def __init__(self, landing: Landing, key: str, edit: Edit, version: str) -> None:
        self._landing = landing
        self._edit = edit
        self.claimed: PendingEvent | None = None
        """The call's audit event, if this write claimed it (``Landing``)."""
        self.key = key
        self.version = version
        """The version the write lands as."""
        self.write: Write | None = None

    def __call__(self, db: sqlite3.Cursor) -> int:
        row = db.execute(GET, (self.key,)).fetchone()
        stored = stored_from(row) if row is not None else None
        write = self.write = self._edit(stored)
        meta, values = written_values(write, self.version)
        if stored is None:
            sql, parameters = INSERT_NEW, (self.key, write.data, *values)
        else:
            sql = UPDATE_AT
            parameters = (write.data, *values, self.key, stored.version)
        if db.execute(sql, parameters).rowcount != 1:
            return 0
        self.claimed = self._landing.written(db, write, self.version, meta)
        return 1
