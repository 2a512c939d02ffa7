"""The filesystem change log: one small file per entry, numbered per entity.

An entity's entries live in ``root/.changes/<scope>/<entity>/``, each file
named by its zero-padded ``seq``. A recorded mutation writes its entry, naming
the version it is about to commit, durably *before* its commit point (the
sidecar's rename, or its removal for a delete), under the storage's exclusive
lock. So only the newest entry can name a version that never landed (a crash
between the two): a landed version is the key's current one or in its
history. The next write of the entity checks its newest entry and reuses that
seq when it did not land; a reader (under the shared lock) leaves it out.
Numbers thus stay gapless and in commit order, and no entry is lost. An erase
(a sweep) removes versions the newest entries name, which would make them look
unlanded: it first records the log's newest landed seq in ``high`` beside the
entries, and no number at or below it is issued again. An empty log starts at
the clock (``first_seq``), so one begun after a purge reuses no number.
"""

import json
import os
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from app.features.memory.domain import format_timestamp, parse_timestamp
from app.features.memory.domain.keys import entity_prefix_of_key
from app.features.memory.ports import Change, ChangeLogPage, LoggedChange
from app.infra.change_numbers import first_seq
from app.infra.durable_files import read_file, remove_file, replace_file
from app.infra.filesystem.layout import encode_segment

CHANGES_DIR = ".changes"
HIGH_WATER = "high"
PRUNE_PER_WRITE = 8

type Landed = Callable[[str, str], bool]
"""Whether ``version`` of ``key`` landed (current, or in the key's history)."""


def log_directory(root: Path, prefix: str) -> Path:
    parts = [encode_segment(part) for part in prefix.split("/") if part]
    return root.joinpath(CHANGES_DIR, *parts)


def _entry_path(directory: Path, seq: int) -> str:
    return os.path.join(directory, f"{seq:012d}")  # a str: a name per write


def _seqs(directory: Path) -> list[int]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


def _read(directory: Path, seq: int) -> LoggedChange:
    fields = json.loads(read_file(_entry_path(directory, seq)))
    return LoggedChange(
        seq,
        fields["key"],
        fields["operation"],
        fields["actor"],
        parse_timestamp(fields["at"]),
        fields["version"],
    )


def _high_water(directory: Path) -> int:
    try:
        return int(read_file(os.path.join(directory, HIGH_WATER)))
    except FileNotFoundError:
        return 0


class FileChangeLog:
    """Writes and reads the entities' logs; callers hold the storage's lock."""

    def __init__(self, root: Path, retention: timedelta, landed: Landed) -> None:
        self._root, self.retention, self._landed = root, retention, landed

    def _newest(self, directory: Path) -> int:
        """The newest landed seq of the log (a crashed write's entries excluded:
        one, or a rename's two)."""
        seqs = _seqs(directory)
        for seq in reversed(seqs[-2:]):
            fields = json.loads(read_file(_entry_path(directory, seq)))
            # A rename's entry of its old key landed where the file went.
            key = fields.get("landed_as", fields["key"])
            if self._landed(key, fields["version"]):
                break
        else:
            seq = seqs[-2:][0] - 1 if seqs else 0
        if seqs and seq == seqs[-1]:
            return seq
        # The newest entry's version is gone: a crashed write's, or erased since.
        return max(seq, _high_water(directory))

    def _next(self, directory: Path) -> int:
        """The number of the log's next entry: one past its newest landed one,
        or ``first_seq`` (the clock) for an empty log, so a log begun after a
        purge reuses no number a cursor may hold."""
        newest = self._newest(directory)
        return newest + 1 if newest or _seqs(directory) else first_seq()

    def intend(self, key: str, version: str, change: Change) -> None:
        """The entry of a write about to commit ``version`` (exclusive lock)."""
        self._append([(key, None)], version, change)

    def intend_rename(
        self, source: str, destination: str, version: str, change: Change
    ) -> None:
        """A rename's two entries, the old key then the new (exclusive lock)."""
        self._append([(source, destination), (destination, None)], version, change)

    def _append(
        self, keys: list[tuple[str, str | None]], version: str, change: Change
    ) -> None:
        directory = log_directory(self._root, entity_prefix_of_key(keys[0][0]))
        directory.mkdir(parents=True, exist_ok=True)
        seq = self._next(directory) - 1
        for key, landed_as in keys:
            seq += 1
            entry = {
                "key": key,
                "operation": change.operation,
                "actor": change.actor,
                "at": format_timestamp(change.at),
                "version": version,
            }
            if landed_as is not None:
                entry["landed_as"] = landed_as
            replace_file(_entry_path(directory, seq), json.dumps(entry).encode())
        cutoff = change.at - self.retention
        for old in _seqs(directory)[:PRUNE_PER_WRITE]:
            if old >= seq or _read(directory, old).at >= cutoff:
                break
            remove_file(_entry_path(directory, old))

    def keep_numbers(self, key: str) -> None:
        """Before ``key``'s versions are erased (exclusive lock): remember the
        log's newest landed seq, which may be one of ``key``'s entries."""
        directory = log_directory(self._root, entity_prefix_of_key(key))
        if newest := self._newest(directory):  # 0: no log to keep numbers of
            replace_file(os.path.join(directory, HIGH_WATER), str(newest).encode())

    def page(self, prefix: str, after: int, now: datetime, limit: int) -> ChangeLogPage:
        """Entries after ``after`` within the retention (shared lock held)."""
        directory = log_directory(self._root, prefix)
        newest = self._newest(directory)
        since = now - self.retention
        entries: list[LoggedChange] = []
        for seq in _seqs(directory):
            if seq <= after or seq > newest:
                continue
            entry = _read(directory, seq)
            if entry.at >= since:
                entries.append(entry)
                if len(entries) == limit:
                    break
        return ChangeLogPage(entries, newest)

    def scrub(self, prefix: str) -> None:
        """Erase the logs of the entities under ``prefix`` (a whole segment)."""
        if prefix.endswith("/"):
            shutil.rmtree(log_directory(self._root, prefix), ignore_errors=True)
