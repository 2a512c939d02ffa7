"""The version history of each filesystem key, read and kept under the storage lock."""

import os
from dataclasses import replace
from pathlib import Path

from app.features.memory.ports import Change, HistoryRetention, VersionRecord
from app.infra.durable_files import read_file
from app.infra.filesystem.history import (
    archive,
    archived,
    current_record,
    drop_unlanded,
    history_directory,
    read_archived,
)
from app.infra.filesystem.layout import (
    Record,
    body_path,
    object_location,
    read_record,
    sidecar_path,
)
from app.infra.history_records import expired, without_data


class KeyHistories:
    """History of the keys under ``root``; every method runs with the lock held."""

    def __init__(self, root: Path, retention: HistoryRetention) -> None:
        self._root = root
        self._retention = retention

    def _current(self, key: str) -> tuple[Record | None, str]:
        directory, stem = object_location(self._root, key)
        current = read_record(sidecar_path(directory, stem))
        version = current.entry.version if current else ""
        return current, body_path(directory, stem, version)

    def archive_current(
        self, key: str, current: Record | None, *, at: str | None = None
    ) -> None:
        """Keep the record of the version about to be replaced (it landed).

        ``at``: the key whose body it is, when that is another (a rename's source).
        """
        if current is None:
            return
        history = history_directory(self._root, key)
        drop_unlanded(history, current.entry.version)
        directory, stem = object_location(self._root, at or key)
        body = body_path(directory, stem, current.entry.version)
        record = current_record(current, body)
        if record is not None:
            archive(history, key, replace(record, data=read_file(body)))

    def _records(self, key: str) -> list[tuple[str | None, VersionRecord]]:
        """Every landed record of ``key``, newest first (None: the sidecar's own)."""
        current, body = self._current(key)
        found: list[tuple[str | None, VersionRecord]] = []
        record = current_record(current, body) if current else None
        if record is not None:
            found.append((None, record))
        history = history_directory(self._root, key)
        version = current.entry.version if current else None
        found += [(item.path, item.record) for item in archived(history, version)]
        return found

    def trim(self, key: str, change: Change | None) -> None:
        """Prune ``key``'s history after a recorded write (a few files at most)."""
        if change is None:
            return
        records = self._records(key)
        newest_first = [record for _, record in records]
        for position in expired(newest_first, self._retention, change.at):
            path = records[position][0]
            if path is not None:
                os.unlink(path)

    def versions(self, key: str, after: str | None, limit: int) -> list[VersionRecord]:
        records = [record for _, record in self._records(key)]
        versions = [record.version for record in records]
        start = 0
        if after is not None:
            start = versions.index(after) + 1 if after in versions else len(versions)
        return [without_data(record) for record in records[start : start + limit]]

    def landed(self, key: str, version: str) -> bool:
        """Whether ``version`` of ``key`` landed: current, or in its history."""
        current, _ = self._current(key)
        if current is not None and current.entry.version == version:
            return True
        return self.version(key, version) is not None

    def version(self, key: str, version: str) -> VersionRecord | None:
        current, body = self._current(key)
        if current is not None and current.entry.version == version:
            record = current_record(current, body)
            return replace(record, data=read_file(body)) if record else None
        history = history_directory(self._root, key)
        return read_archived(
            history, version, current.entry.version if current else None
        )
