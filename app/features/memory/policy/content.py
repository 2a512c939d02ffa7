"""What a file's content and metadata must be: fact lines, sizes, metadata budget."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from app.shared.errors import (
    invalid_argument_error,
    oversize_write_error,
    replace_fact_match_error,
    version_conflict_error,
)
from app.shared.locations import Location

from ..domain import Address, MetadataChanges, count_matches, is_fact_line
from ..ports import FileMetadata, StoredObject
from ..schemas import WriteFile
from . import require_text

LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def require_description(description: str | None) -> str | None:
    if description is None:
        return None
    require_text("description", description)
    if not LINE_BREAKS.isdisjoint(description):  # one C pass, not a generator
        raise invalid_argument_error("description", "description must be a single line")
    return description


def require_aliases(aliases: Sequence[str] | None) -> tuple[str, ...] | None:
    if aliases is None:
        return None
    for alias in aliases:
        require_text("aliases", alias)
    return tuple(aliases)


def require_metadata_changes(changes: MetadataChanges) -> None:
    """An edit's optional aliases, then its optional one-line description."""
    require_aliases(changes.aliases)
    require_description(changes.description)


def require_fact_line(line: str) -> str:
    require_text("line", line)
    if not is_fact_line(line):
        raise invalid_argument_error(
            "line",
            "line must be a single fact line with a [stated], [observed], "
            "[inferred], or [system] label and non-empty text, e.g. "
            "'- [stated] Prefers tea'",
        )
    return line


def require_old_string(old_string: str) -> str:
    require_text("old_string", old_string)
    if not old_string:
        raise invalid_argument_error("old_string", "old_string must not be empty")
    return old_string


def require_within_limit(address: Address, data: bytes, limit: int) -> bytes:
    if len(data) > limit:
        raise oversize_write_error(address.location, len(data), limit)
    return data


def require_edit_fits(
    address: Address,
    content: str,
    meta: FileMetadata,
    limit: int,
    changes: MetadataChanges,
) -> bytes:
    """An edited body within the size limit, then its metadata within budget.

    Metadata the edit leaves as stored (no description, no aliases given) is
    not measured again: every write that set it was held to the budget.
    """
    data = require_within_limit(address, content.encode(), limit)
    if changes.description is not None or changes.aliases is not None:
        require_metadata_budget(meta.description, meta.aliases)
    return data


def require_single_match(
    location: Location, stored: StoredObject, old_string: str, expected: str
) -> str:
    """The stored content, when ``old_string`` occurs in it exactly once.

    Otherwise: at the version the caller read, REPLACE_FACT_MATCH (its old
    string is wrong); at a newer one, VERSION_CONFLICT (the file moved on).
    """
    content = stored.data.decode()
    matches = count_matches(content, old_string)
    if matches != 1 and stored.version == expected:
        raise replace_fact_match_error(location, content, stored.version, matches)
    if matches != 1:
        raise version_conflict_error(location, content, stored.version)
    return content


METADATA_BUDGET_BYTES = 6144
"""Description plus JSON aliases; keeps every file inside GCS's 8 KiB metadata."""


def require_metadata_budget(description: str, aliases: Sequence[str]) -> None:
    described = len(description.encode())
    size = described + len(json.dumps(list(aliases)).encode())
    if size > METADATA_BUDGET_BYTES:
        raise invalid_argument_error(
            "description" if described > METADATA_BUDGET_BYTES else "aliases",
            f"description and aliases together take {size} bytes of metadata, over "
            f"the {METADATA_BUDGET_BYTES}-byte limit; shorten the description or "
            "drop aliases",
        )


def asked_expiry(
    request: WriteFile,
) -> tuple[bool, datetime | None, int | None]:
    """What a write asks of the expiry: (``expires_at`` given, it, ``ttl_seconds``).

    Both at once is refused: which one the caller meant cannot be known.
    """
    given = "expires_at" in request.model_fields_set
    if given and request.ttl_seconds is not None:
        raise invalid_argument_error(
            "expires_at", "give expires_at or ttl_seconds, not both"
        )
    expires = request.expires_at
    return (
        given,
        None if expires is None else expires.astimezone(UTC),
        request.ttl_seconds,
    )
