"""What an erase and a purge's scrub leave on a filesystem storage's disk: nothing.

An erased key, and every key under a scrubbed prefix, keeps no file name, no
byte and no directory anywhere under the root, its history and its stray
bodies and temporaries included; the keys of other entities stay whole.
"""

import os
from datetime import UTC, datetime
from pathlib import Path

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.filesystem.storage import FilesystemStorage

AT = datetime(2026, 12, 6, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
CHANGE = Change("write_file", "t", AT)
ALICE, BOB = "user/alice/notes/tea.md", "user/bob/notes/tea.md"
LONG = f"user/alice/{'Ü' * 120}/deep.md"
"""Under a directory whose name ends in a digest, its text kept beside it."""


def traces(root: Path, name: str, *, skip: str = "") -> list[str]:
    """Every path below ``root`` that names ``name``, or file that holds it
    (outside ``root/skip``)."""
    found: list[str] = []
    for directory, directories, files in os.walk(root):
        if skip and Path(directory).is_relative_to(root / skip):
            continue
        for entry in directories + files:
            path = os.path.join(directory, entry)
            if name in os.path.relpath(path, root):
                found.append(path)
        found += [
            os.path.join(directory, entry)
            for entry in files
            if name.encode() in Path(directory, entry).read_bytes()
        ]
    return found


async def written(storage: FilesystemStorage, key: str, *bodies: bytes) -> str:
    """``key`` written once per body, each a recorded change: its last version."""
    version: str | None = None
    for body in bodies:
        version = await storage.put_if_version(Write(key, body, META, CHANGE), version)
        assert version is not None
    assert version is not None
    return version


async def test_an_erased_key_leaves_no_file_body_history_or_directory(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    version = await written(storage, ALICE, b"alice one", b"alice two", b"three")
    await written(storage, BOB, b"bob one", b"bob two")

    assert await storage.erase_if_version(ALICE, version)

    # The change log keeps the writes that were logged until a purge's scrub.
    assert traces(tmp_path, "alice", skip=".changes") == []
    assert (await storage.get(ALICE)) is None
    bob = await storage.get(BOB)
    assert bob is not None and bob.data == b"bob two"
    assert len(await storage.list_versions(BOB, after=None, limit=10)) == 2


async def test_a_scrub_removes_every_trace_under_its_prefix_only(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    versions = [
        await written(storage, key, b"alice 1", b"alice 2") for key in (ALICE, LONG)
    ]
    await written(storage, BOB, b"bob one", b"bob two")
    area = tmp_path / "user" / "alice" / "notes"
    (area / ".tmp-0123456789abcdef").write_bytes(b"alice's half-written sidecar")
    (area / "tea.md%0123456789abcdef0123").write_bytes(b"alice's orphan body")
    history = tmp_path / ".history" / "user" / "alice" / "notes" / "tea.md"
    (history / ".tmp-0123456789abcdef").write_bytes(b"{alice's half-written")
    for key, version in zip((ALICE, LONG), versions, strict=True):
        assert await storage.delete_if_version(key, version, change=CHANGE)

    await storage.scrub("user/alice/")

    assert traces(tmp_path, "alice") == []
    bob = await storage.get(BOB)
    assert bob is not None and bob.data == b"bob two"
    assert len(await storage.list_versions(BOB, after=None, limit=10)) == 2


async def test_a_scrub_keeps_live_files_and_removes_only_strays(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    version = await written(storage, ALICE, b"kept")
    long_version = await written(storage, LONG, b"long kept")
    area = tmp_path / "user" / "alice" / "notes"
    stray, temporary = area / "tea.md%0123456789abcdef0123", area / ".tmp-01234567"
    stray.write_bytes(b"orphan")
    temporary.write_bytes(b"half")

    await storage.scrub("user/alice/")

    assert sorted(os.listdir(area)) == [f"tea.md%{version}", "tea.md%meta"]
    for key, data, expected in (
        (ALICE, b"kept", version),
        (LONG, b"long kept", long_version),
    ):
        stored = await storage.get(key)
        assert stored is not None and (stored.data, stored.version) == (data, expected)
    listed = await storage.list_page("user/alice/", start_after=None, limit=10)
    assert [item.key for item in listed] == sorted([ALICE, LONG])


async def test_a_scrub_to_part_of_a_name_keeps_the_history_outside_it(
    tmp_path: Path,
) -> None:
    storage = FilesystemStorage(tmp_path)
    tea = await written(storage, ALICE, b"tea 1", b"tea 2")
    zen = "user/alice/notes/zen.md"
    await written(storage, zen, b"zen 1", b"zen 2")
    assert await storage.delete_if_version(ALICE, tea, change=CHANGE)

    await storage.scrub("user/alice/notes/t")

    assert await storage.list_versions(ALICE, after=None, limit=10) == []
    assert not (tmp_path / ".history" / "user" / "alice" / "notes" / "tea.md").exists()
    assert len(await storage.list_versions(zen, after=None, limit=10)) == 2
