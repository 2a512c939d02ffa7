"""A listing row holds tuples even when storage hands over lists."""

from typing import cast

from app.features.memory.domain.views import entry_row
from app.features.memory.ports import FileMetadata, ListedObject

from .conftest import START


def test_a_row_turns_listed_aliases_and_sources_into_tuples() -> None:
    aliases = cast("tuple[str, ...]", ["tea"])
    sources = cast("tuple[str, ...]", ["user"])
    meta = FileMetadata("d", aliases, sources, START)
    listed = ListedObject("user/alice/notes/tea.md", meta, "v1", "t")

    row = entry_row(("user", "notes", "tea"), listed)

    assert row["aliases"] == ("tea",)
    assert row["sources"] == ("user",)
