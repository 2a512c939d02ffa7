"""Filesystem renames: a journal file makes the move of a file all or nothing.

A rename runs under the storage's exclusive lock, but it touches two sidecars,
so one rename is not one rename(2): its commit point is the journal
``root/.rename``, written durably once both preconditions held and the change
log's two entries were written. From then on the move only ever rolls forward
(``finish``), one idempotent step at a time: the destination's replaced record
is archived, the source's archived records move after the destination's own
(renumbered), the source's current record is archived, the body is copied under
the new version, the destination sidecar is committed, the source sidecar and
body removed, and the journal removed last. A crash anywhere leaves the
journal; the next operation of any process finds it (a writer under its
exclusive lock; a reader first takes that lock to finish it), so no reader
ever sees both paths or neither, and no half-moved history.
"""

import fcntl
import json
import os
import secrets
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.features.memory.domain import format_timestamp, parse_timestamp
from app.features.memory.ports import Change
from app.infra.durable_files import (
    read_file,
    remove_file,
    replace_file,
    sync_directory,
    write_new,
)
from app.infra.filesystem.change_log import FileChangeLog
from app.infra.filesystem.commits import tidy
from app.infra.filesystem.history import history_directory
from app.infra.filesystem.key_history import KeyHistories
from app.infra.filesystem.layout import (
    body_path,
    make_directories,
    object_location,
    read_record,
    record_document,
    remove_empty,
    sidecar_path,
)
from app.infra.filesystem.lock import storage_lock

JOURNAL = ".rename"


@dataclass(frozen=True, slots=True)
class Move:
    source: str
    destination: str
    expected: str
    replacing: str | None
    version: str
    change: Change


def _document(move: Move) -> bytes:
    change = move.change
    return json.dumps(
        {
            "source": move.source,
            "destination": move.destination,
            "expected": move.expected,
            "replacing": move.replacing,
            "version": move.version,
            "operation": change.operation,
            "actor": change.actor,
            "at": format_timestamp(change.at),
        }
    ).encode()


def _move(document: bytes) -> Move:
    fields = json.loads(document)
    change = Change(fields["operation"], fields["actor"], parse_timestamp(fields["at"]))
    return Move(
        fields["source"],
        fields["destination"],
        fields["expected"],
        fields["replacing"],
        fields["version"],
        change,
    )


class FileRenames:
    """Begins and finishes renames under ``root``; callers hold the exclusive lock."""

    def __init__(
        self,
        root: Path,
        histories: KeyHistories,
        changes: FileChangeLog,
        *,
        lock: tuple[Path, float],
    ) -> None:
        self._root, self._histories, self._changes = root, histories, changes
        self._lock = lock
        self.journal = root / JOURNAL

    @contextmanager
    def locked(self, operation: int) -> Generator[None]:
        """The storage lock, once a rename a crash interrupted is finished."""
        path, timeout = self._lock
        if operation == fcntl.LOCK_SH and self.journal.exists():
            with storage_lock(path, fcntl.LOCK_EX, timeout):
                self.finish()
        with storage_lock(path, operation, timeout):
            if operation == fcntl.LOCK_EX:
                self.finish()
            yield

    def _version_of(self, key: str) -> str | None:
        directory, stem = object_location(self._root, key)
        record = read_record(sidecar_path(directory, stem))
        return None if record is None else record.entry.version

    def rename(
        self,
        source: str,
        destination: str,
        expected: str,
        replacing: str | None,
        change: Change,
    ) -> str | None:
        """Move ``source`` at ``expected`` onto ``destination`` at ``replacing``."""
        with self.locked(fcntl.LOCK_EX):
            if self._version_of(source) != expected:
                return None
            if self._version_of(destination) != replacing:
                return None
            version = secrets.token_hex(10)
            move = Move(source, destination, expected, replacing, version, change)
            self._changes.intend_rename(source, destination, version, change)
            replace_file(os.fspath(self.journal), _document(move))  # the commit point
            self.finish()
            return version

    def finish(self) -> None:
        """Roll the journaled rename forward to its end (each step idempotent)."""
        try:
            move = _move(self.journal.read_bytes())
        except FileNotFoundError:
            return
        if self._version_of(move.destination) != move.version:
            self._move_history(move)
            self._commit_destination(move)
        self._remove_source(move)
        self.journal.unlink()
        sync_directory(self._root)

    def _move_history(self, move: Move) -> None:
        source_dir, source_stem = object_location(self._root, move.source)
        target_dir, target_stem = object_location(self._root, move.destination)
        taken = read_record(sidecar_path(target_dir, target_stem))
        self._histories.archive_current(move.destination, taken)
        moved, into = (
            history_directory(self._root, key)
            for key in (move.source, move.destination)
        )
        names = sorted(n for n in _listed(moved) if not n.startswith("."))
        if names:
            into.mkdir(parents=True, exist_ok=True)
        for name in names:
            there = sorted(n for n in _listed(into) if not n.startswith("."))
            sequence = int(there[-1].split("-", 1)[0]) + 1 if there else 1
            rest = name.split("-", 1)[1]
            renamed = os.path.join(into, f"{sequence:012d}-{rest}")
            os.replace(os.path.join(moved, name), renamed)
            sync_directory(into)
        current = read_record(sidecar_path(source_dir, source_stem))
        self._histories.archive_current(move.destination, current, at=move.source)

    def _commit_destination(self, move: Move) -> None:
        source_dir, source_stem = object_location(self._root, move.source)
        record = read_record(sidecar_path(source_dir, source_stem))
        assert record is not None  # removed only once the destination names it
        data = read_file(body_path(source_dir, source_stem, move.expected))
        make_directories(self._root, move.destination)
        directory, stem = object_location(self._root, move.destination)
        body = body_path(directory, stem, move.version)
        remove_file(body)  # an earlier attempt's, never named
        write_new(body, data)
        sync_directory(directory)
        document = record_document(
            move.destination, move.version, record.entry.metadata, move.change
        )
        replace_file(sidecar_path(directory, stem), document)
        if move.replacing is not None:
            old = body_path(directory, stem, move.replacing)
            tidy(lambda: remove_file(old))

    def _remove_source(self, move: Move) -> None:
        directory, stem = object_location(self._root, move.source)
        sidecar = sidecar_path(directory, stem)
        if os.path.exists(sidecar):
            os.unlink(sidecar)
            sync_directory(directory)
        body = body_path(directory, stem, move.expected)
        tidy(lambda: remove_file(body))
        tidy(lambda: remove_empty(self._root, directory))
        tidy(lambda: self._histories.trim(move.destination, move.change))


def _listed(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []
