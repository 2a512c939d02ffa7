"""What the importers from other memory tools take and answer (operator tasks)."""

from typing import Annotated

from pydantic import BaseModel, Field

from .fields import Segment
from .transfers import EntityPrefix, ImportMode

SourcePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="Where the files to import are, on the machine running the task.",
    ),
]
MODE = (
    "What to do with a file that exists with other content: fail (default) "
    "writes nothing, skip keeps it, overwrite replaces it."
)
DRY_RUN = "Only report what the import would do; write nothing."


class ForeignImport(EntityPrefix):
    """Files of another memory tool at ``path``, imported into one area."""

    path: SourcePath
    area: Segment = Field(description="The area to write.")
    mode: ImportMode = Field(default=ImportMode.FAIL, description=MODE)
    dry_run: bool = Field(default=False, description=DRY_RUN)


class ImportMcpMemory(ForeignImport):
    """The MCP reference memory server's memory.json (JSON Lines) into one area."""

    area: Segment = Field(default="knowledge", description="The area to write.")


class ImportBasicMemory(ForeignImport):
    """basic-memory markdown notes (one file, or a folder read recursively)."""

    area: Segment = Field(default="notes", description="The area to write.")


class ForeignImportReport(BaseModel):
    """What an import did (or, on a dry run, would do), file names by outcome."""

    scope: str
    entity_id: str
    area: str
    mode: ImportMode
    dry_run: bool
    created: list[str]
    overwritten: list[str]
    unchanged: list[str]
    """Already held exactly this content, description and aliases: not written."""
    skipped: list[str]
    """Held other content and mode was skip: kept as it was."""
    changed: bool
    """Whether the import wrote (or would write) anything."""
