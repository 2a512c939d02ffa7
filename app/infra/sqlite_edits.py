"""An edit of one SQLite row in one trip to the connection's thread.

The job reads the row, applies the caller's pure edit and writes the result
guarded by the version it read, inside its group-commit savepoint; the batch
holds ``BEGIN IMMEDIATE``, so no other process writes between the read and the
write, and the compare-and-swap still guards the row.
"""

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from app.features.memory.ports import StoredObject, Write

from .sqlite_group_commit import GroupCommit
from .sqlite_rows import COLUMNS, WRITTEN, stored_from, written_values

GET = f"SELECT data, {COLUMNS} FROM memory_objects WHERE key = ?"
INSERT_NEW = (
    f"INSERT INTO memory_objects (key, data, {WRITTEN}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING"
)
"""Parameters: key, data, ``written_values``, held event number."""
UPDATE_AT = (
    "UPDATE memory_objects SET data = ?, description = ?, aliases = ?, "
    "sources = ?, last_updated = ?, version = ?, operation = ?, "
    "actor = ?, changed_at = ?, audit_event = ? "
    "WHERE key = ? AND version = ?"
)
"""Parameters: data, ``written_values``, held event number, key, expected version."""

type Edit = Callable[[StoredObject | None], Write]


class EditJob:
    """One edit of ``key`` as a group-commit job; ``write`` is what it stored."""

    __slots__ = ("_commit", "_edit", "_event", "key", "version", "write")

    def __init__(self, commit: GroupCommit, key: str, edit: Edit, version: str) -> None:
        self._commit = commit
        self._edit = edit
        self._event: str | None = None
        self.key = key
        self.version = version
        """The version the write lands as."""
        self.write: Write | None = None

    @staticmethod
    def values(event: str | None) -> tuple[str | None]:
        """The job's one parameter: its held audit event's number (or None)."""
        return (event,)

    async def submit(self, _sql: str, parameters: Sequence[Any]) -> int:
        """Run the job with its held audit event; 1 if it landed."""
        self._event = parameters[0]
        return await self._commit.run(self)

    def __call__(self, db: sqlite3.Connection) -> int:
        row = db.execute(GET, (self.key,)).fetchone()
        stored = stored_from(row) if row is not None else None
        write = self.write = self._edit(stored)
        values = written_values(write, self.version)
        if stored is None:
            return db.execute(
                INSERT_NEW, (self.key, write.data, *values, self._event)
            ).rowcount
        return db.execute(
            UPDATE_AT, (write.data, *values, self._event, self.key, stored.version)
        ).rowcount
