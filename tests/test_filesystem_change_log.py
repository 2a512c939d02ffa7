"""The filesystem change log after a crash between an entry and its commit.

A write records its entry before its sidecar commits; a crash in between
leaves an entry naming a version that never landed. Readers leave it out and
the entity's next write takes its number: the log stays gapless, in commit
order, and names only landed versions.
"""

import contextlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.infra.filesystem import renames
from app.infra.filesystem.change_log import log_directory
from app.infra.filesystem.storage import FilesystemStorage

NOW = datetime.now(UTC).replace(microsecond=0)
META = FileMetadata("", (), (), NOW)
KEY = "user/alice/notes/tea.md"
OTHER = "user/alice/notes/chai.md"


async def test_an_entry_whose_write_never_landed_is_skipped_then_reused(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    first = await storage.put(Write(KEY, b"1", META, Change("write_file", "a", NOW)))
    directory = log_directory(tmp_path, "user/alice/")
    crashed = {
        "key": KEY,
        "operation": "append_line",
        "actor": "a",
        "at": NOW.isoformat(),
        "version": "never-landed",
    }
    base = int(os.listdir(directory)[0]) - 1
    (directory / f"{base + 2:012d}").write_text(json.dumps(crashed))
    later = NOW + timedelta(seconds=1)

    page = await storage.changes_after("user/alice/", 0, now=later, limit=9)
    assert [(e.seq - base, e.version) for e in page.changes] == [(1, first)]
    assert page.last == base + 1

    second = await storage.put(Write(KEY, b"2", META, Change("append_line", "a", NOW)))
    page = await storage.changes_after("user/alice/", 0, now=later, limit=9)
    numbered = [(e.seq - base, e.version) for e in page.changes]
    assert numbered == [(1, first), (2, second)]
    assert page.last == base + 2


class Crash(BaseException):
    """The process dies here."""


async def test_a_rename_cut_short_before_its_journal_gives_its_numbers_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its two entries never landed: the next write follows the last landed one."""
    storage = FilesystemStorage(tmp_path)
    version = None
    for body in (b"1", b"2", b"3"):
        write = Write(KEY, body, META, Change("write_file", "t", NOW))
        version = await storage.put_if_version(write, version)
    assert version is not None

    def crash(path: str, data: bytes) -> None:
        raise Crash

    monkeypatch.setattr(renames, "replace_file", crash)
    with contextlib.suppress(Crash):
        await storage.rename_if_version(
            KEY, OTHER, version, replacing=None, change=Change("rename_file", "t", NOW)
        )
    monkeypatch.undo()
    after = FilesystemStorage(tmp_path)  # the next process
    write = Write(KEY, b"4", META, Change("write_file", "t", NOW))
    assert await after.put_if_version(write, version) is not None

    page = await after.changes_after("user/alice/", 0, now=NOW, limit=10)
    seqs = [entry.seq for entry in page.changes]
    assert [entry.key for entry in page.changes] == [KEY] * 4
    assert seqs == list(range(seqs[0], seqs[0] + 4))


async def test_an_entry_exactly_as_old_as_the_retention_is_kept(tmp_path: Path) -> None:
    kept = timedelta(seconds=60)
    storage = FilesystemStorage(
        tmp_path, retention=HistoryRetention(changes_seconds=60)
    )
    first = Write(KEY, b"1", META, Change("write_file", "t", NOW))
    version = await storage.put_if_version(first, None)
    later = Write(KEY, b"2", META, Change("write_file", "t", NOW + kept))
    assert await storage.put_if_version(later, version) is not None

    page = await storage.changes_after("user/alice/", 0, now=NOW + kept, limit=10)

    assert [entry.at for entry in page.changes] == [NOW, NOW + kept]


async def test_a_scrub_of_an_entity_without_a_log_is_no_error(tmp_path: Path) -> None:
    storage = FilesystemStorage(tmp_path)
    await storage.put(Write(KEY, b"unlogged", META))

    await storage.scrub("user/alice/")
    await storage.scrub("user/nobody/")

    assert not (tmp_path / ".changes").exists()
