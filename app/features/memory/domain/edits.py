"""Edits of a file's body and metadata: fact lines, appends, spans, aliases."""

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

from ..ports import FileMetadata

FACT_LINE = re.compile(r"- \[(?:stated|observed|inferred|system)\] ([^\n]*)")


def is_fact_line(line: str) -> bool:
    match = FACT_LINE.fullmatch(line)
    return match is not None and bool(match.group(1).strip())


def appended(content: str, line: str) -> str:
    separator = "\n" if content and not content.endswith("\n") else ""
    return f"{content}{separator}{line}\n"


def count_matches(content: str, needle: str) -> int:
    """Occurrences of ``needle`` at every start index, overlaps included."""
    count, start = 0, content.find(needle)
    while start != -1:
        count += 1
        start = content.find(needle, start + 1)
    return count


def merged_aliases(
    stored: Sequence[str], added: Iterable[str] | None
) -> tuple[str, ...]:
    if added is None:  # most edits add none: the stored ones as they are
        return tuple(stored)
    result = list(stored)
    for alias in added:
        if alias not in result:
            result.append(alias)
    return tuple(result)


def with_source(sources: Iterable[str], source: str) -> tuple[str, ...]:
    return tuple(sorted({*sources, source}))


class MetadataChanges(Protocol):
    """What an edit asks of the metadata; None leaves a field as stored."""

    @property
    def description(self) -> str | None: ...

    @property
    def aliases(self) -> Sequence[str] | None: ...


def edited_metadata(
    old: FileMetadata, changes: MetadataChanges, source: str, now: datetime
) -> FileMetadata:
    """An edit's metadata: a given description replaces, aliases only grow."""
    description = changes.description
    return FileMetadata(
        old.description if description is None else description,
        merged_aliases(old.aliases, changes.aliases),
        with_source(old.sources, source),
        now,
        old.expires_at,  # an edit keeps the file's expiry
    )
