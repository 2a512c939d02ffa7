"""Listings of a filesystem storage: keys only, in order, whatever their names' length.

A name too long for the filesystem is stored under a readable head and a
digest; a listing still filters and orders it by its whole key, read back from
beside it. The storage's own hidden files (history, change log, lock) are
never listed, not even from the root.
"""

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

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


def encoded_head(segment: str, length: int) -> str:
    return "".join(
        char if char.isascii() else "".join(f"%{b:02X}" for b in char.encode())
        for char in segment
    )[:length]


@pytest.mark.parametrize(("plain", "kept"), [(147, 150), (148, 148), (149, 149)])
async def test_a_hashed_name_keeps_a_head_of_whole_escapes_and_a_digest(
    tmp_path: Path, plain: int, kept: int
) -> None:
    """The first 150 characters of the encoded name, less an escape cut in two."""
    segment = "Ü" + "a" * (plain - 6) + "Ü" * 60 + ".md"
    storage = await stored(tmp_path, f"{NOTES}{segment}")

    digest = hashlib.sha256(segment.encode()).hexdigest()[:32]
    sidecar = f"{encoded_head(segment, kept)}%~{digest}%meta"
    assert sidecar in os.listdir(tmp_path / "user" / "alice" / "notes")
    assert await listed(storage, NOTES, None) == [f"{NOTES}{segment}"]


async def test_a_name_is_hashed_only_past_200_characters_and_a_dot_is_escaped(
    tmp_path: Path,
) -> None:
    longest, dotted = "a" * 197 + ".md", ".tea.md"
    storage = await stored(tmp_path, f"{NOTES}{longest}", f"{NOTES}{dotted}")

    names = os.listdir(tmp_path / "user" / "alice" / "notes")
    assert {f"{longest}%meta", "%2Etea.md%meta"} <= set(names)
    assert await listed(storage, NOTES, None) == [
        f"{NOTES}{dotted}",
        f"{NOTES}{longest}",
    ]
