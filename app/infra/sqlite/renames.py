"""A rename of one SQLite row as one group-commit job: one transaction moves it all.

The job checks both preconditions, removes the source row (and any expired
file it replaces at the destination), inserts the destination row under a new
version, moves the source's history records after the destination's own
(renumbered, so each key's ``seq`` run stays whole), logs the source's
change-log entry, then runs what lands with every write (``sqlite_writes``
``Landing.written``: the rename's record, the destination's entry, search
mark, change marker and audit event). A reader sees the commit or nothing.
"""

import sqlite3

from app.features.audit.ports import PendingEvent
from app.features.memory.domain import format_timestamp
from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.ports import Change, Write
from app.infra.sqlite.edits import GET
from app.infra.sqlite.rows import stored_from, written_values
from app.infra.sqlite.search_schema import FORGET
from app.infra.sqlite.writes import INSERT_NEW, Landing

_VERSION = "SELECT version FROM memory_objects WHERE key = ?"
_REMOVE = "DELETE FROM memory_objects WHERE key = ?"
_LAST_SEQ = "SELECT coalesce(max(seq), 0) FROM memory_history WHERE key = ?"
_MOVE_HISTORY = "UPDATE memory_history SET key = ?, seq = seq + ? WHERE key = ?"
# The newest record carries its key's count and age floor (``sqlite_history``):
# after a move they are counted afresh over both runs.
_RECOUNT = """
UPDATE memory_history SET
    n = (SELECT count(*) FROM memory_history WHERE key = :key),
    floor = (SELECT min(julianday(last_updated)) FROM memory_history WHERE key = :key)
WHERE key = :key AND seq = (SELECT max(seq) FROM memory_history WHERE key = :key)
"""


class RenameJob:
    """``source`` at ``expected`` moved to ``destination`` at ``replacing``."""

    __slots__ = (
        "change",
        "claimed",
        "destination",
        "expected",
        "landing",
        "replacing",
        "source",
        "version",
    )

    def __init__(
        self,
        landing: Landing,
        keys: tuple[str, str],
        versions: tuple[str, str | None, str],
        change: Change,
    ) -> None:
        self.landing, self.change = landing, change
        self.source, self.destination = keys
        self.expected, self.replacing, self.version = versions
        self.claimed: PendingEvent | None = None

    def __call__(self, db: sqlite3.Cursor) -> int:
        row = db.execute(GET, (self.source,)).fetchone()
        if row is None or row[6] != self.expected:
            return 0
        taken = db.execute(_VERSION, (self.destination,)).fetchone()
        if (None if taken is None else taken[0]) != self.replacing:
            return 0
        stored = stored_from(row)
        write = Write(self.destination, stored.data, stored.metadata, self.change)
        for key in (self.source, self.destination):
            db.execute(_REMOVE, (key,))
            for statement in FORGET:
                db.execute(statement, (key,))
        meta, values = written_values(write, self.version)
        db.execute(INSERT_NEW, (self.destination, write.data, *values))
        last = db.execute(_LAST_SEQ, (self.destination,)).fetchone()[0]
        db.execute(_MOVE_HISTORY, (self.destination, last, self.source))
        db.execute(_RECOUNT, {"key": self.destination})
        at = format_timestamp(self.change.at)
        self.landing.log.append(
            db,
            entity_prefix_of_key(self.source),
            self.source,
            self.version,
            self.change,
            at,
        )
        self.claimed = self.landing.written(db, write, self.version, meta)
        return 1
