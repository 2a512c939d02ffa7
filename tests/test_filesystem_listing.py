"""Listings of a filesystem storage: keys only, in order, whatever their names' length.

A name too long for the filesystem is stored under a readable head and a
digest; a listing still filters and orders it by its whole key, read back from
beside it. The storage's own hidden files (history, change log, lock) are
never listed, not even from the root.
"""

from datetime import UTC, datetime
from pathlib import Path

from app.features.memory.ports import Change, FileMetadata, Write
from app.infra.filesystem.storage import FilesystemStorage

AT = datetime(2026, 12, 6, tzinfo=UTC)
META = FileMetadata("Tea", (), ("http",), AT)
CHANGE = Change("write_file", "t", AT)
HEAD = "Ü" * 100
"""600 characters once encoded: a name's text past its head is in the digest only."""
NOTES = "user/alice/notes/"
LONG_DIRECTORY = f"user/alice/{HEAD}d/tea.md"


async def stored(root: Path, *keys: str) -> FilesystemStorage:
    storage = FilesystemStorage(root)
    for key in keys:
        # Written twice, so each key has history under ``.history``.
        version = await storage.put_if_version(Write(key, b"1", META, CHANGE), None)
        assert await storage.put_if_version(Write(key, b"2", META, CHANGE), version)
    return storage


async def listed(
    storage: FilesystemStorage, prefix: str, after: str | None
) -> list[str]:
    page = await storage.list_page(prefix, start_after=after, limit=10)
    return [item.key for item in page]


async def test_long_names_are_filtered_and_ordered_by_their_whole_key(
    tmp_path: Path,
) -> None:
    names = [f"{NOTES}{HEAD}{tail}.md" for tail in ("c", "a", "b")]
    storage = await stored(tmp_path, *names, f"{NOTES}tea.md")

    assert await listed(storage, f"{NOTES}{HEAD}b", None) == [f"{NOTES}{HEAD}b.md"]
    assert await listed(storage, f"{NOTES}{HEAD}", names[1]) == sorted(names)[1:]
    assert await listed(storage, NOTES, None) == sorted([*names, f"{NOTES}tea.md"])


async def test_a_long_directory_name_lists_its_keys_by_their_whole_key(
    tmp_path: Path,
) -> None:
    storage = await stored(tmp_path, LONG_DIRECTORY, f"user/alice/{HEAD}a.md")

    assert await listed(storage, f"user/alice/{HEAD}d/", None) == [LONG_DIRECTORY]
    assert await listed(storage, f"user/alice/{HEAD}d", None) == [LONG_DIRECTORY]


async def test_a_listing_from_the_root_sees_keys_only(tmp_path: Path) -> None:
    keys = [LONG_DIRECTORY, f"{NOTES}tea.md", "user/bob/x.md"]
    storage = await stored(tmp_path, *keys)
    assert (tmp_path / ".history").is_dir() and (tmp_path / ".lock").exists()

    assert await listed(storage, "", None) == sorted(keys)
    assert await listed(storage, "us", None) == sorted(keys)
    assert await storage.count("") == len(keys)


async def test_a_change_page_holds_at_most_its_limit(tmp_path: Path) -> None:
    storage = await stored(tmp_path, f"{NOTES}a.md", f"{NOTES}b.md")

    first = await storage.changes_after("user/alice/", 0, now=AT, limit=3)
    rest = await storage.changes_after(
        "user/alice/", first.changes[-1].seq, now=AT, limit=3
    )

    assert [len(first.changes), len(rest.changes)] == [3, 1]
    assert first.changes[-1].seq < rest.changes[0].seq
