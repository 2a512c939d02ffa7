"""Datasets for the benchmark: SQLite files written directly, plus bearer tokens.

Rows go straight into the adapter's table with ``executemany`` (the schema is
created by the adapter itself), so a million-file store takes seconds, not an
hour of API calls. Every file is a small markdown body with realistic metadata.
"""

import asyncio
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.features.memory.domain import file_key, format_timestamp
from app.features.memory.ports import FileMetadata
from app.infra.sqlite.storage import open_sqlite_storage
from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant

READER = "bench-reader"
WRITER = "bench-writer"
INDEX_SCOPES = (("user", 250), ("project", 150), ("organization", 100))
"""500 files across 3 scopes for the index scenario (and the read scenario)."""
WRITE_FILES = 64
"""Files each writer connection may own: w0..w63, a0..a63, r0..r63 in ``bench``."""
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
CONTENT = (
    "# {name}\n\n"
    "- [stated] Prefers green tea in the morning and oolong after lunch.\n"
    "- [observed] Usually reviews pull requests before standup.\n"
    "- [inferred] Likes short, direct answers with code first.\n"
)
INSERT = (
    "INSERT INTO memory_objects (key, data, description, aliases, sources, "
    "last_updated, version) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class FileSpec:
    scope: str
    area: str
    name: str


def sample_file(name: str, serial: int) -> tuple[bytes, FileMetadata]:
    """The body and metadata of a seeded file; ``serial`` spreads timestamps."""
    moment = BASE_TIME + timedelta(seconds=serial, microseconds=(serial * 7) % 1000)
    metadata = FileMetadata(
        description=f"Notes about {name}: preferences, habits and decisions",
        aliases=(f"{name}-alias", "bench"),
        sources=("http",),
        last_updated=moment,
    )
    return CONTENT.format(name=name).encode(), metadata


def _row(
    scope: str, entity: str, area: str, name: str, serial: int
) -> tuple[str, bytes, str, str, str, str, str]:
    data, meta = sample_file(name, serial)
    return (
        file_key(scope, entity, area, name),
        data,
        meta.description,
        json.dumps(list(meta.aliases)),
        json.dumps(list(meta.sources)),
        format_timestamp(meta.last_updated),
        f"{serial:020x}",
    )


AREAS = ("preferences", "projects", "people", "decisions", "howto")


def index_files() -> list[FileSpec]:
    """The reader's 500 files: (scope, area, name) in seeding order."""
    return [
        FileSpec(scope, AREAS[i % len(AREAS)], f"note-{i:04d}")
        for scope, count in INDEX_SCOPES
        for i in range(count)
    ]


def _reader_rows() -> Iterator[tuple[str, bytes, str, str, str, str, str]]:
    entity = {"user": "reader-u", "project": "reader-p", "organization": "reader-o"}
    for serial, spec in enumerate(index_files()):
        yield _row(spec.scope, entity[spec.scope], spec.area, spec.name, serial)


def _writer_rows() -> Iterator[tuple[str, bytes, str, str, str, str, str]]:
    for i in range(WRITE_FILES):
        for prefix in ("w", "a", "r"):
            yield _row("user", "writer", "bench", f"{prefix}{i}", 10_000 + i)


def _bulk_rows(
    total: int, per_entity: int
) -> Iterator[tuple[str, bytes, str, str, str, str, str]]:
    """``total`` files of other tenants, ``per_entity`` files per entity.

    Only keys and versions differ: nothing reads these files, they only make
    the store big, so every row shares one body and one set of metadata.
    """
    _, data, description, aliases, sources, updated, _ = _row("user", "x", "x", "n", 0)
    for serial in range(total):
        entity, index = divmod(serial, per_entity)
        key = f"user/tenant-{entity:07d}/{AREAS[serial % len(AREAS)]}/n{index:05d}.md"
        yield key, data, description, aliases, sources, updated, f"{serial:020x}"


def _sized_rows(
    sizes: Sequence[int],
) -> Iterator[tuple[str, bytes, str, str, str, str, str]]:
    """One entity ``sized-<n>`` holding exactly n files, for each n."""
    for n in sizes:
        for i in range(n):
            yield _row("user", f"sized-{n}", AREAS[i % len(AREAS)], f"f{i:04d}", i)


async def _create_schema(path: Path) -> None:
    async with open_sqlite_storage(str(path)):
        pass


def write_database(
    path: Path,
    *,
    bulk: int = 0,
    per_entity: int = 100,
    sized: Sequence[int] = (),
) -> None:
    """A fresh database with the reader's and writer's files plus ``bulk`` others."""
    path.unlink(missing_ok=True)
    asyncio.run(_create_schema(path))
    db = sqlite3.connect(path, isolation_level=None)
    try:
        # No journal while seeding: a million rows written once, not twice.
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("BEGIN")
        db.executemany(INSERT, _reader_rows())
        db.executemany(INSERT, _writer_rows())
        db.executemany(INSERT, _sized_rows(sized))
        db.executemany(INSERT, _bulk_rows(bulk, per_entity))
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode = WAL")
    finally:
        db.close()


@dataclass(frozen=True, slots=True)
class Tokens:
    reader: str
    writer: str
    sized: dict[int, str]

    def floor_table(self, sized: Sequence[int] = ()) -> dict[str, dict[str, str]]:
        """What the floor server looks bearer tokens up in: token -> scope -> entity."""
        table = {
            self.reader: {
                "user": "reader-u",
                "project": "reader-p",
                "organization": "reader-o",
            },
            self.writer: {"user": "writer"},
        }
        table.update({self.sized[n]: {"user": f"sized-{n}"} for n in sized})
        return table


def write_tokens(path: Path, *, sized: Sequence[int] = ()) -> Tokens:
    """A Wenchang token file with the reader, the writer and one token per size."""
    path.unlink(missing_ok=True)
    reader, _ = create_token(
        path,
        {
            "user": Grant("reader-u", "owner"),
            "project": Grant("reader-p", "member"),
            "organization": Grant("reader-o", "member"),
        },
    )
    writer, _ = create_token(path, {"user": Grant("writer", "owner")})
    by_size = {
        n: create_token(path, {"user": Grant(f"sized-{n}", "owner")})[0] for n in sized
    }
    return Tokens(reader=reader, writer=writer, sized=by_size)
