"""The floors' storage work: the statements Wenchang's use cases run, and nothing else.

Both floors (bare Starlette in ``floor``, a minimal Tenchi app in ``tenchi_floor``)
call these, so they differ only in the web layer. One process-wide aiosqlite
connection configured like Wenchang's adapter (WAL, ``synchronous`` as
``WENCHANG_SQLITE_SYNCHRONOUS`` says, ``FULL`` by default); each statement is one
trip to aiosqlite's thread. Read = one SELECT; replace, append and fact
replacement = SELECT then one compare-and-swap UPDATE; index = one SELECT per
granted scope, then order, byte budget and render.
"""

import json
import os
import secrets
from collections import Counter
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiosqlite

COLUMNS = "description, aliases, sources, last_updated, version"
INDEX_MAX_BYTES = int(os.environ.get("BENCH_FLOOR_INDEX_MAX_BYTES", "1048576"))
MAX_FILE_BYTES = 16384
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LABELS = ("- [stated] ", "- [observed] ", "- [inferred] ", "- [system] ")

Row = tuple[Any, ...]
"""``data, description, aliases, sources, last_updated, version``."""
Meta = tuple[str, str, str, str]
"""``description, aliases (JSON), sources (JSON), last_updated``."""


@dataclass(frozen=True, slots=True)
class Written:
    """A landed write: the file as the caller names it, its content, meta, version."""

    scope: str
    area: str
    name: str
    content: str
    meta: Meta
    version: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "area": self.area,
            "name": self.name,
            "content": self.content,
            "version": self.version,
            "description": self.meta[0],
            "aliases": json.loads(self.meta[1]),
            "sources": json.loads(self.meta[2]),
            "last_updated": self.meta[3],
        }


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stored(scope: str, area: str, name: str, row: Row) -> Written:
    meta: Meta = (row[1], row[2], row[3], row[4])
    return Written(scope, area, name, row[0].decode(), meta, row[5])


def bearer(authorization: str, tokens: Mapping[str, dict[str, str]]) -> Any:
    """The grants (scope -> entity) of a bearer token, or None."""
    scheme, _, token = authorization.partition(" ")
    return tokens.get(token) if scheme.lower() == "bearer" else None


async def select(db: aiosqlite.Connection, key: str) -> Row | None:
    rows = list(
        await db.execute_fetchall(
            f"SELECT data, {COLUMNS} FROM memory_objects WHERE key = ?", (key,)
        )
    )
    return tuple(rows[0]) if rows else None


async def compare_and_swap(
    db: aiosqlite.Connection, key: str, data: bytes, meta: Meta, expected: str
) -> str | None:
    version = secrets.token_hex(10)
    cursor = await db.execute(
        "UPDATE memory_objects SET data = ?, description = ?, aliases = ?, "
        "sources = ?, last_updated = ?, version = ? WHERE key = ? AND version = ?",
        (data, *meta, version, key, expected),
    )
    return version if cursor.rowcount == 1 else None


def _with_http(row: Row) -> str:
    return json.dumps(sorted({*json.loads(row[3]), "http"}))


def replaced_meta(row: Row, description: str, aliases: list[str]) -> Meta:
    return (description, json.dumps(aliases), _with_http(row), now())


def kept_meta(row: Row) -> Meta:
    return (row[1], row[2], _with_http(row), now())


def appended(content: str, line: str) -> str:
    separator = "\n" if content and not content.endswith("\n") else ""
    return f"{content}{separator}{line}\n"


def is_fact_line(line: str) -> bool:
    return line.startswith(LABELS) and "\n" not in line


def _micros(text: str) -> int:
    delta = datetime.fromisoformat(text) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


async def index_body(db: aiosqlite.Connection, grants: Mapping[str, str]) -> str:
    """The caller's index as JSON text: system first, newest first, within budget."""
    ranked: list[tuple[int, int, str, str, str, str]] = []
    for scope, entity in grants.items():
        prefix = f"{scope}/{entity}/"
        rows = await db.execute_fetchall(
            f"SELECT key, {COLUMNS} FROM memory_objects "
            "WHERE key >= ? AND key < ? ORDER BY key LIMIT 1000",
            (prefix, prefix[:-1] + "0"),
        )
        for key, description, aliases, sources, updated, version in rows:
            _, _, area, filename = key.split("/")
            entry = {
                "scope": scope,
                "area": area,
                "name": filename[:-3],
                "version": version,
                "description": description,
                "aliases": json.loads(aliases),
                "sources": json.loads(sources),
                "last_updated": updated,
            }
            tier = 0 if area == "system" else 1
            text = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
            ranked.append((tier, -_micros(updated), key, text, scope, area))
    ranked.sort(key=lambda row: row[:3])
    kept: list[str] = []
    omitted: Counter[tuple[str, str]] = Counter()
    total = 0
    for _, _, _, text, scope, area in ranked:
        cost = len(text.encode())
        if not omitted and total + cost <= INDEX_MAX_BYTES:
            kept.append(text)
            total += cost
        else:
            omitted[(scope, area)] += 1
    capped = [
        {"scope": scope, "area": area, "omitted": count}
        for (scope, area), count in sorted(omitted.items())
    ]
    return f'{{"entries":[{",".join(kept)}],"capped":{json.dumps(capped)}}}'


def load_tokens() -> dict[str, dict[str, str]]:
    with open(os.environ["BENCH_FLOOR_TOKENS"]) as stream:
        tokens: dict[str, dict[str, str]] = json.load(stream)
    return tokens


@asynccontextmanager
async def connection() -> AsyncGenerator[aiosqlite.Connection]:
    """``BENCH_FLOOR_DB`` opened and configured like Wenchang's adapter."""
    db = await aiosqlite.connect(os.environ["BENCH_FLOOR_DB"], isolation_level=None)
    await db.execute("PRAGMA busy_timeout = 5000")
    await db.execute("PRAGMA journal_mode = WAL")
    synchronous = os.environ.get("WENCHANG_SQLITE_SYNCHRONOUS", "full").upper()
    await db.execute(f"PRAGMA synchronous = {synchronous}")
    await db.execute("PRAGMA secure_delete = ON")
    try:
        yield db
    finally:
        await db.close()
