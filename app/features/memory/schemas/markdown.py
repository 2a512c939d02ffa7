"""What the markdown export and import tasks take and answer."""

from typing import Annotated

from pydantic import BaseModel, Field

from .fields import Segment, Strict
from .transfers import EntityPrefix, ImportMode

TreePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="The tree's directory, on the machine running the task.",
    ),
]


class ExportMarkdown(EntityPrefix):
    """One entity's files written as ``{path}/{scope}/{area}/{name}.md``."""

    path: TreePath


class MarkdownExported(BaseModel):
    scope: str
    entity_id: str
    path: str
    files: int
    """Files of the entity exported (written or already there byte for byte)."""
    written: int
    unchanged: int
    """Already in the tree with exactly these bytes (a re-run): not rewritten."""
    unnamed: list[str]
    """area/name of files whose name is too long for a file name (not written)."""


class ImportMarkdown(EntityPrefix):
    """A tree ``memory.export_markdown`` wrote, read back into one entity."""

    path: TreePath
    mode: ImportMode = Field(
        default=ImportMode.FAIL,
        description=(
            "What to do with a file that exists with other content: fail "
            "(default) writes nothing, skip keeps it, overwrite replaces it."
        ),
    )
    dry_run: bool = Field(
        default=False, description="Only check the tree and count; write nothing."
    )


class MarkdownImported(BaseModel):
    """What an import did (on a dry run: would do), as counts of files."""

    scope: str
    entity_id: str
    path: str
    mode: ImportMode
    dry_run: bool
    files: int
    created: int
    overwritten: int
    unchanged: int
    """Already held exactly this content and metadata: not written."""
    skipped: int
    """Held other content and mode was skip: kept as it was."""


class ReadMarkdownArchive(Strict):
    """The caller's own files as a markdown tree (the browser's zip download)."""

    scope: Segment | None = Field(
        default=None, description="One scope; without it, every scope the token holds."
    )
