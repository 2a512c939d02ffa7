"""What only the filesystem adapter does: on-disk layout, lock, several processes."""

import asyncio
import fcntl
import os
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.ports import FileMetadata, Write
from app.infra.filesystem.storage import FilesystemStorage
from app.shared.errors import backend_unavailable

KEY = "user/alice/notes/tea.md"
META = FileMetadata("Tea", (), ("http",), datetime(2026, 1, 2, tzinfo=UTC))
PROCESSES = 4
INCREMENTS = 20
PROCESS_TIMEOUT_SECONDS = 120

_INCREMENTER = """
import asyncio, sys
from datetime import UTC, datetime
from pathlib import Path
from app.features.memory.ports import FileMetadata, Write
from app.infra.filesystem.storage import FilesystemStorage

async def main(root, count):
    storage = FilesystemStorage(Path(root))
    meta = FileMetadata("counter", (), ("test",), datetime(2026, 1, 1, tzinfo=UTC))
    done = 0
    while done < count:
        current = await storage.get("counter")
        data = b"%d" % (int(current.data) + 1)
        write = Write("counter", data, meta)
        if await storage.put_if_version(write, current.version):
            done += 1

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


@contextmanager
def held_lock(root: Path) -> Generator[None]:
    """Another process's exclusive hold on the storage lock."""
    descriptor = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(descriptor)


async def test_names_are_percent_encoded_with_upper_case_escaped(
    tmp_path: Path,
) -> None:
    """``Tea ☕`` is stored as ``%54ea%20%E2%98%95.md``: a sidecar and a body."""
    storage = FilesystemStorage(tmp_path)

    version = await storage.put(Write("user/alice/notes/Tea ☕.md", b"hot", META))

    directory = tmp_path / "user" / "alice" / "notes"
    assert sorted(os.listdir(directory)) == [
        f"%54ea%20%E2%98%95.md%{version}",
        "%54ea%20%E2%98%95.md%meta",
    ]
    assert (directory / f"%54ea%20%E2%98%95.md%{version}").read_bytes() == b"hot"


async def test_a_long_name_keeps_a_readable_head_and_a_digest(tmp_path: Path) -> None:
    """A 256-character name fits the filesystem's 255-byte limit and reads back."""
    storage = FilesystemStorage(tmp_path)
    key = f"user/alice/notes/{'Ü' * 256}.md"

    await storage.put(Write(key, b"long", META))

    names = os.listdir(tmp_path / "user" / "alice" / "notes")
    assert all(len(name.encode()) <= 255 and "%~" in name for name in names)
    stored = await storage.get(key)
    assert stored is not None and stored.data == b"long"
    assert [
        item.key for item in await storage.list_page("", start_after=None, limit=5)
    ] == [key]


async def test_an_interrupted_write_leaves_the_previous_object_whole(
    tmp_path: Path,
) -> None:
    """A body written without its sidecar (a crash mid-write) is never read."""
    storage = FilesystemStorage(tmp_path)
    version = await storage.put(Write(KEY, b"committed", META))
    orphan = tmp_path / "user" / "alice" / "notes" / "tea.md%0123456789abcdef0123"
    orphan.write_bytes(b"half-written")

    stored = await storage.get(KEY)

    assert stored is not None and (stored.data, stored.version) == (
        b"committed",
        version,
    )
    assert await storage.put_if_version(Write(KEY, b"next", META), version) is not None


async def test_waiting_for_the_lock_never_blocks_the_event_loop(tmp_path: Path) -> None:
    """While another process holds the lock, the loop keeps running other tasks."""
    storage = FilesystemStorage(tmp_path, lock_timeout=60)
    await storage.put(Write(KEY, b"x", META))

    with held_lock(tmp_path):
        reading = asyncio.create_task(storage.get(KEY))
        for _ in range(5):
            await asyncio.sleep(0.01)
        assert not reading.done()

    stored = await reading
    assert stored is not None and stored.data == b"x"


async def test_a_lock_held_too_long_is_backend_unavailable_timeout(
    tmp_path: Path,
) -> None:
    """Past the lock timeout a call gives up with a 503 ``timeout``."""
    storage = FilesystemStorage(tmp_path, lock_timeout=0.1)

    with held_lock(tmp_path), pytest.raises(AppError) as raised:
        await storage.put(Write(KEY, b"x", META))

    assert raised.value.definition is backend_unavailable
    assert raised.value.details["reason"] == "timeout"
    assert await storage.get(KEY) is None


async def test_several_processes_on_one_root_lose_no_update(tmp_path: Path) -> None:
    """Processes racing compare-and-swap increments on one key all count."""
    await FilesystemStorage(tmp_path).put(Write("counter", b"0", META))
    command = [sys.executable, "-c", _INCREMENTER, str(tmp_path), str(INCREMENTS)]

    workers = [
        subprocess.Popen(command, cwd=Path(__file__).parent.parent)
        for _ in range(PROCESSES)
    ]
    codes = [worker.wait(timeout=PROCESS_TIMEOUT_SECONDS) for worker in workers]

    assert codes == [0] * PROCESSES
    stored = await FilesystemStorage(tmp_path).get("counter")
    assert stored is not None and stored.data == str(PROCESSES * INCREMENTS).encode()


@pytest.mark.parametrize(
    "key", ["user/../tea.md", "user/a\\b/tea.md", "user/al\x01ice/tea.md", "user//x"]
)
async def test_a_key_segment_outside_the_segment_rule_is_refused(
    tmp_path: Path, key: str
) -> None:
    """The layout applies the one segment rule: such a key names no file."""
    storage = FilesystemStorage(tmp_path)
    with pytest.raises(ValueError, match="storage key segment"):
        await storage.put(Write(key, b"x", META))
    assert [path.name for path in tmp_path.iterdir() if path.name != ".lock"] == []
    assert (
        await storage.list_page(key.split("/")[0] + "/", start_after=None, limit=9)
        == []
    )
