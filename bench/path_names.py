"""``python -m bench.path_names [N]``: bytes the filesystem storage keeps per write.

In process, no HTTP: N rounds of a recorded write, a rename and a delete of
one file through ``FilesystemStorage`` (history and change log on, as the
server runs it), after a warm-up of N rounds. Prints the Python heap
``tracemalloc`` sees retained after the second N rounds minus after the first,
per round: what a long-running server keeps forever per write. Before the fix
every written name parsed by ``pathlib`` was interned, hence immortal, on
Python 3.12. ``PYTHONPATH=<another source tree> python bench/path_names.py``
measures that tree the same way (e.g. a ``git worktree`` of an older commit).
"""

import asyncio
import gc
import sys
import tempfile
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.filesystem.storage import FilesystemStorage

META = FileMetadata("Tea", ("bench",), ("http",), datetime(2026, 3, 1, tzinfo=UTC))
KEY = "user/alice/notes/tea"
MOVED = "user/alice/notes/green-tea"


async def rounds(storage: FilesystemStorage, start: int, count: int) -> None:
    """Write, rename and delete one file ``count`` times (distinct versions)."""
    for i in range(start, start + count):
        change = Change("write_file", "bench", META.last_updated + timedelta(i))
        version = await storage.put(Write(KEY, b"# Tea\n", META, change))
        moved = await storage.rename_if_version(
            KEY, MOVED, version, replacing=None, change=change
        )
        assert moved is not None
        assert await storage.delete_if_version(MOVED, moved, change=change)


def _heap() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def retained_per_round(root: Path, count: int) -> float:
    """Heap bytes kept per round between ``count`` and ``2 * count`` rounds."""
    storage = FilesystemStorage(root)
    tracemalloc.start()
    try:
        await rounds(storage, 0, count)
        first = _heap()
        await rounds(storage, count, count)
        return (_heap() - first) / count
    finally:
        tracemalloc.stop()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as root:
        kept = asyncio.run(retained_per_round(Path(root), count))
    print(f"rounds: {count} (write + rename + delete each), after {count} warm-up")
    print(f"heap retained per round: {kept:.0f} bytes")


if __name__ == "__main__":
    main()
