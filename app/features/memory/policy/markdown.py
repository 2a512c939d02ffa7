"""What a markdown tree's file may restore: checked before anything is written."""

import re
from datetime import datetime

from pydantic import ValidationError

from app.shared.errors import invalid_argument_error

from ..domain.front_matter import FrontMatterError, name_of, parse
from ..ports.import_writes import Restore
from ..ports.markdown_tree import TreeFile
from ..schemas import EntityPrefix, ImportedFile
from .imports import checked_restore

FIELDS = frozenset(
    {"description", "aliases", "sources", "last_updated", "expires_at", "version"}
)
RESTORABLE_VERSION = re.compile(r"[0-9A-Za-z_-][0-9A-Za-z._-]{0,63}")
"""A version storage may keep as named: what every backend issues, and safe as
part of a file name."""


def tree_restore(
    entity: EntityPrefix,
    file: TreeFile,
    data: bytes,
    *,
    max_file_bytes: int,
    source: str,
    now: datetime,
) -> tuple[Restore, str | None]:
    """The file as a restore and the version it names (None: none to keep), or
    INVALID_ARGUMENT (``path``) naming the file and what is wrong."""
    try:
        fields, content = parse(data)
        text = content.decode()
    except (FrontMatterError, UnicodeDecodeError) as exc:
        raise _invalid(file, str(exc)) from exc
    unknown = sorted(str(key) for key in fields if key not in FIELDS)
    if unknown:
        raise _invalid(file, f"unknown front matter fields {', '.join(unknown)}")
    named = {"area": file.area, "name": name_of(file.file), "content": text}
    try:
        item = ImportedFile.model_validate(fields | named)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise _invalid(file, f"{where}: {problem['msg']}") from exc
    restore = checked_restore(
        entity, item, max_file_bytes=max_file_bytes, source=source, now=now
    )
    version = item.version
    if version is not None and not RESTORABLE_VERSION.fullmatch(version):
        version = None
    return restore, version


def _invalid(file: TreeFile, problem: str) -> Exception:
    return invalid_argument_error("path", f"{file.label} {problem}")
