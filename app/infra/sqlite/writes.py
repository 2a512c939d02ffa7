"""Every statement one SQLite file change runs, in its own transaction, in order.

A change of a file through ``SqliteStorage`` is one group-commit job
(``sqlite_group_commit``) on the write connection: its statement, then, only
if that statement landed, what lands with it (``Landing.written``, or
``Landing.deleted``):

1. the version record, when the write carries a ``Change``
   (``sqlite_history.HistoryRecorder``: the record and its key's pruning),
   and the entity's change-log entry (``sqlite_change_log.ChangeLog``);
2. search: a written file is marked pending (a search indexes it first), a
   deleted one's postings and mark are dropped (``sqlite_search_schema``);
3. the entity's change marker is replaced (``change_markers.BUMP``);
4. the call's audit event (``Change.event``) is claimed and staged
   (``sqlite_audit_events.STAGE``) when the audit log shares this database.

They share the job's transaction: all of them commit, or none (a failing
statement fails the write, rolled back whole). A job keeps the event it
claimed (``claimed``); the storage settles it once the commit answered.
"""

import sqlite3
from dataclasses import dataclass

from app.features.audit.ports import PendingEvent
from app.features.memory.domain import format_timestamp
from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.ports import Change, Write
from app.infra.change_markers import BUMP, marker_id, new_marker
from app.infra.sqlite.audit_events import STAGE, staged_record
from app.infra.sqlite.change_log import ChangeLog
from app.infra.sqlite.history import HistoryRecorder
from app.infra.sqlite.history_pack import pack
from app.infra.sqlite.rows import COLUMNS, new_version
from app.infra.sqlite.search_schema import FORGET

REPLACE = (
    f"INSERT OR REPLACE INTO memory_objects (key, data, {COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
"""Parameters: key, data, ``written_values``."""
INSERT_NEW = (
    f"INSERT INTO memory_objects (key, data, {COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING"
)
"""Parameters: key, data, ``written_values``."""
UPDATE_AT = (
    "UPDATE memory_objects SET data = ?, description = ?, aliases = ?, "
    "sources = ?, last_updated = ?, expires_at = ?, version = ? "
    "WHERE key = ? AND version = ?"
)
"""Parameters: data, ``written_values``, key, expected version."""
DELETE_AT = (
    "DELETE FROM memory_objects WHERE key = ? AND version = ? "
    "RETURNING description, aliases, sources"
)
"""Parameters: key, expected version; the removed file's metadata columns."""
MARK_PENDING = "INSERT OR IGNORE INTO search_pending VALUES (?)"


@dataclass(frozen=True, slots=True)
class Landing:
    """What lands with every file change of one storage (see the module)."""

    history: HistoryRecorder
    log: ChangeLog
    stages_events: bool = False
    """The audit log shares this database (``SqliteStorage.share_audit_log``)."""

    def written(
        self,
        db: sqlite3.Cursor,
        write: Write,
        version: str,
        meta: tuple[str, str, str, str],
    ) -> PendingEvent | None:
        """``write`` landed as ``version`` with the metadata columns ``meta``
        (``meta_values``): its record, search mark, marker and event (returned
        if this write claimed it)."""
        change, prefix = write.change, entity_prefix_of_key(write.key)
        if change is not None:
            # An edit's change is stamped with the moment it gives the file.
            same = change.at is write.metadata.last_updated
            at = meta[3] if same else format_timestamp(change.at)
            operation, actor, data = change.operation, change.actor, write.data
            entry = (version, operation, actor, 0, len(data), *meta, pack(data))
            self.history.record(db, write.key, entry, at)
            self.log.append(db, prefix, write.key, version, change, at)
        db.execute(MARK_PENDING, (write.key,))
        return self._marked(db, prefix, version, change)

    def deleted(
        self,
        db: sqlite3.Cursor,
        key: str,
        removed: tuple[str, str, str, str],
        change: Change | None,
    ) -> PendingEvent | None:
        """``key`` at version ``removed[3]`` is gone: a tombstone, no postings."""
        description, aliases, sources, version = removed
        prefix = entity_prefix_of_key(key)
        if change is not None:
            stamp = format_timestamp(change.at)
            meta = (description, aliases, sources, stamp)
            tombstone = new_version()
            entry = (tombstone, change.operation, change.actor, 1, 0, *meta, b"")
            self.history.record(db, key, entry, stamp)
            self.log.append(db, prefix, key, tombstone, change, stamp)
        for statement in FORGET:
            db.execute(statement, (key,))
        return self._marked(db, prefix, version, change)

    def _marked(
        self, db: sqlite3.Cursor, prefix: str, version: str, change: Change | None
    ) -> PendingEvent | None:
        db.execute(BUMP, (marker_id(prefix), new_marker()))
        pending = change.event if change is not None and self.stages_events else None
        if pending is None:
            return None
        event = pending.claim()
        if event is None:
            return None  # an earlier write of the call committed it
        try:
            db.execute(STAGE, (staged_record(event), version))
        except BaseException:
            pending.settle(landed=False)  # the write fails with it
            raise
        return pending


class StatementJob:
    """One write statement (put, guarded put, delete without a record) as a job."""

    __slots__ = ("claimed", "landing", "meta", "parameters", "sql", "version", "write")

    def __init__(
        self,
        landing: Landing,
        sql: str,
        parameters: tuple[object, ...],
        write: Write,
        version: str,
        meta: tuple[str, str, str, str],
    ) -> None:
        self.landing, self.sql, self.parameters = landing, sql, parameters
        self.write, self.version, self.meta = write, version, meta
        self.claimed: PendingEvent | None = None

    def __call__(self, db: sqlite3.Cursor) -> int:
        if db.execute(self.sql, self.parameters).rowcount != 1:
            return 0  # the precondition failed: nothing else runs
        self.claimed = self.landing.written(db, self.write, self.version, self.meta)
        return 1


class DeleteJob:
    """A guarded delete as a job; with a ``change`` it leaves a tombstone record."""

    __slots__ = ("change", "claimed", "expected", "key", "landing")

    def __init__(
        self, landing: Landing, key: str, expected: str, change: Change | None
    ) -> None:
        self.landing, self.key, self.expected = landing, key, expected
        self.change = change
        self.claimed: PendingEvent | None = None

    def __call__(self, db: sqlite3.Cursor) -> int:
        rows = db.execute(DELETE_AT, (self.key, self.expected)).fetchall()
        if not rows:
            return 0
        description, aliases, sources = rows[0]
        removed = (description, aliases, sources, self.expected)
        self.claimed = self.landing.deleted(db, self.key, removed, self.change)
        return 1
