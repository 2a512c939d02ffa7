"""File metadata as the flat string map object stores keep beside a body."""

import json
from collections.abc import Mapping
from datetime import datetime
from typing import cast

from app.features.memory.domain import format_timestamp, parse_timestamp
from app.features.memory.ports import FileMetadata, ListedObject

# The keys and encodings of the Wenchang library's GCS layout, so a bucket it
# wrote reads here unchanged: lists as JSON arrays, the timestamp as ISO 8601 UTC.
DESCRIPTION = "description"
ALIASES = "aliases"
SOURCES = "sources"
LAST_UPDATED = "last-updated"
EXPIRES_AT = "expires-at"
"""Present only on a file that expires (older objects never carry it)."""


def metadata_to_map(metadata: FileMetadata) -> dict[str, str]:
    values = {
        DESCRIPTION: metadata.description,
        ALIASES: json.dumps(list(metadata.aliases)),
        SOURCES: json.dumps(sorted(set(metadata.sources))),
        LAST_UPDATED: format_timestamp(metadata.last_updated),
    }
    if metadata.expires_at is not None:
        values[EXPIRES_AT] = format_timestamp(metadata.expires_at)
    return values


def _strings(values: Mapping[str, object], key: str) -> tuple[str, ...]:
    decoded: object = json.loads(str(values[key]))
    items = cast(list[object], decoded) if isinstance(decoded, list) else None
    if items is None or not all(isinstance(item, str) for item in items):
        raise ValueError(f"stored metadata {key!r} is not a JSON array of strings")
    return tuple(str(item) for item in items)


def metadata_from_map(values: Mapping[str, object]) -> FileMetadata:
    """Decode a stored map; a missing key or malformed value raises ValueError."""
    missing = [
        key
        for key in (DESCRIPTION, ALIASES, SOURCES, LAST_UPDATED)
        if key not in values
    ]
    if missing:
        raise ValueError(f"stored metadata lacks {', '.join(missing)}")
    return FileMetadata(
        description=str(values[DESCRIPTION]),
        aliases=_strings(values, ALIASES),
        sources=_strings(values, SOURCES),
        last_updated=parse_timestamp(str(values[LAST_UPDATED])),
        expires_at=_moment(values.get(EXPIRES_AT)),
    )


def _moment(value: object) -> datetime | None:
    # An empty value is what a store that cannot delete one key of a map leaves.
    return parse_timestamp(str(value)) if value else None


def listed_object(key: str, metadata: FileMetadata, version: str) -> ListedObject:
    """A listing row of ``metadata``, its moment formatted as shown.

    Formatted again rather than taken from the map: a bucket the Wenchang
    library wrote may spell the same instant otherwise.
    """
    return ListedObject(key, metadata, version, format_timestamp(metadata.last_updated))
