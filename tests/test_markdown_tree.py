"""The markdown export's directory tree on local files (``LocalMarkdownTree``).

Each write goes to a hidden partial file beside its destination and is renamed
into place once a batch of writes (or ``flush``) has been synced; a file that
already holds the bytes is not written; an unreadable file is the caller's
INVALID_ARGUMENT naming ``path``.
"""

import os
from pathlib import Path
from typing import cast

import pytest
from tenchi.errors import AppError

from app.features.memory.ports.markdown_tree import TreeFile
from app.infra.markdown_tree import BATCH, PARTIAL, open_markdown_tree

TEA = TreeFile("notes", "tea.md")


def names(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


async def test_a_write_waits_hidden_beside_its_file_until_the_flush(
    tmp_path: Path,
) -> None:
    tree = open_markdown_tree(str(tmp_path), "user")
    area = tmp_path / "user" / "notes"

    assert await tree.write(TEA, b"green\n") is True
    [partial] = names(area)
    assert partial.startswith(".") and partial.endswith(PARTIAL)
    assert names(tmp_path) == ["user"]

    await tree.flush()
    assert names(area) == ["tea.md"]
    assert (area / "tea.md").read_bytes() == b"green\n"


async def test_the_batch_th_write_puts_the_whole_batch_in_place(
    tmp_path: Path,
) -> None:
    """Without a flush, the ``BATCH``-th write lands every write of the batch."""
    tree = open_markdown_tree(str(tmp_path), "user")
    for number in range(BATCH):
        await tree.write(TreeFile("notes", f"{number}.md"), b"x")

    area = tmp_path / "user" / "notes"
    assert not [name for name in names(area) if name.endswith(PARTIAL)]
    assert len(names(area)) == BATCH


async def test_a_file_holding_other_bytes_is_rewritten(tmp_path: Path) -> None:
    """Only the exact bytes count as held: another length or other bytes of
    the same length are written."""
    tree = open_markdown_tree(str(tmp_path), "user")
    await tree.write(TEA, b"ab")
    await tree.flush()

    assert await tree.write(TEA, b"ab") is False
    assert await tree.write(TEA, b"ba") is True
    await tree.flush()
    assert await tree.write(TEA, b"abc") is True
    await tree.flush()
    assert (tmp_path / "user" / "notes" / "tea.md").read_bytes() == b"abc"


async def test_a_write_that_fails_leaves_no_partial_file(tmp_path: Path) -> None:
    tree = open_markdown_tree(str(tmp_path), "user")
    with pytest.raises(TypeError, match="bytes-like"):
        await tree.write(TEA, cast(bytes, "not bytes"))

    assert names(tmp_path / "user" / "notes") == []
    await tree.flush()
    assert names(tmp_path / "user" / "notes") == []


async def test_a_file_that_cannot_be_read_is_refused_naming_its_path(
    tmp_path: Path,
) -> None:
    tree = open_markdown_tree(str(tmp_path), "user")
    with pytest.raises(AppError) as raised:
        await tree.read(TreeFile("notes", "gone.md"))

    assert raised.value.details["argument"] == "path"
    assert str(raised.value).startswith(
        "Argument path is invalid: notes/gone.md cannot be read"
        " (No such file or directory). "
    )
