"""An erasure of one SQLite file as one group-commit job: the row, its history
and its search rows go in one transaction, guarded by the version listed.

Nothing is recorded (no tombstone, no change-log entry, no audit event); the
entity's change marker moves so cached listings drop the file. secure_delete
(every connection's) zeroes the freed cells; ``SqliteStorage.erase_if_version``
then checkpoints the WAL, so no old page image keeps the bytes.
"""

import sqlite3

from app.infra.change_markers import BUMP, marker_of_key, new_marker
from app.infra.sqlite.search_schema import FORGET

_ERASE = "DELETE FROM memory_objects WHERE key = ? AND version = ?"
_ERASE_HISTORY = "DELETE FROM memory_history WHERE key = ?"


class EraseJob:
    """``key`` at ``expected`` erased with its history; 0 when not at it."""

    __slots__ = ("expected", "key")

    claimed = None
    """An erasure carries no audit event of its own (the task's is recorded)."""

    def __init__(self, key: str, expected: str) -> None:
        self.key, self.expected = key, expected

    def __call__(self, db: sqlite3.Cursor) -> int:
        if db.execute(_ERASE, (self.key, self.expected)).rowcount != 1:
            return 0
        db.execute(_ERASE_HISTORY, (self.key,))
        for statement in FORGET:
            db.execute(statement, (self.key,))
        db.execute(BUMP, (marker_of_key(self.key), new_marker()))
        return 1
