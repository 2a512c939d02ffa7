"""The filesystem change log after a crash between an entry and its commit.

A write records its entry before its sidecar commits; a crash in between
leaves an entry naming a version that never landed. Readers leave it out and
the entity's next write takes its number: the log stays gapless, in commit
order, and names only landed versions.
"""

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.filesystem.change_log import log_directory
from app.infra.filesystem.storage import FilesystemStorage

NOW = datetime.now(UTC).replace(microsecond=0)
META = FileMetadata("", (), (), NOW)
KEY = "user/alice/notes/tea.md"


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
