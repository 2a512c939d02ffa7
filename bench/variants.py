"""Variants of the Wenchang app that isolate one cost under real load.

Never used to serve. ``without_revalidation`` is the production app except that
Tenchi's response check keeps its pydantic ``validate_python`` and ``dump_json``
(the bytes sent are identical) and skips the JSON Schema validation and the
``validate_json`` re-read that Tenchi 0.17+ runs on every JSON response body:
the difference between it and the real app is that check's cost, end to end.
``before_optimisations`` puts back the code the benchmark's optimisations
replaced, so ``python -m bench --before`` measures them side by side.
``without_history`` is the production app with SQLite's history triggers never
installed (the table exists, no version record is written): history on ÷ off.
``rich_logging`` lets the MCP SDK install its Rich root handler again (what
Wenchang did before it configured plain logging first), for MCP before/after.
"""

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import tenchi.server
from pydantic import TypeAdapter
from starlette.applications import Starlette

from app.features.memory.domain import index, parse_timestamp, views
from app.features.memory.ports import FileMetadata, HistoryRetention
from app.features.memory.schemas import FileEntry
from app.infra import sqlite_history, sqlite_storage
from app.infra.sqlite_connection import translate_sqlite_error
from app.server import mcp
from app.server.asgi import build_app
from app.server.settings import load_settings

_checked_payload = tenchi.server._validated_payload  # pyright: ignore[reportPrivateUsage]


def _payload_without_revalidation(
    adapter: TypeAdapter[Any] | None,
    value: Any,
    *,
    media_type: str | None,
    schema_validator: Any,
) -> tuple[Any, bytes | str | None]:
    if adapter is None or media_type != "application/json":
        return _checked_payload(
            adapter, value, media_type=media_type, schema_validator=schema_validator
        )
    validated = adapter.validate_python(value)
    return validated, adapter.dump_json(validated, by_alias=True, warnings="error")


async def _rows_in_three_trips(
    self: sqlite_storage.SqliteStorage, sql: str, parameters: Sequence[Any]
) -> list[Any]:
    try:
        async with self._db.execute(sql, parameters) as cursor:  # pyright: ignore[reportPrivateUsage]
            return list(await cursor.fetchall())
    except sqlite3.Error as exc:
        raise translate_sqlite_error(exc) from exc


def _meta_decoded_each_time(row: Any, offset: int) -> FileMetadata:
    return FileMetadata(
        description=row[offset],
        aliases=tuple(json.loads(row[offset + 1])),
        sources=tuple(json.loads(row[offset + 2])),
        last_updated=parse_timestamp(row[offset + 3]),
    )


def _entry_cost_by_json_dumps(entry: FileEntry) -> int:
    text = json.dumps(entry.model_dump(), separators=(",", ":"), ensure_ascii=False)
    return len(text.encode())


def _format_timestamp_by_strftime(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _epoch_micros_by_parts(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _no_history_triggers(retention: HistoryRetention) -> list[str]:
    return [
        "DROP TRIGGER IF EXISTS temp.history_on_insert",
        "DROP TRIGGER IF EXISTS temp.history_on_update",
    ]


def __getattr__(name: str) -> Starlette:
    if name == "without_history":
        sqlite_history._triggers = _no_history_triggers  # pyright: ignore[reportPrivateUsage]
        return build_app(load_settings())
    if name == "without_revalidation":
        tenchi.server._validated_payload = _payload_without_revalidation  # pyright: ignore[reportPrivateUsage]
        return build_app(load_settings())
    if name == "rich_logging":
        mcp._keep_logging_plain = lambda: None  # pyright: ignore[reportPrivateUsage]
        return build_app(load_settings())
    if name == "before_optimisations":
        sqlite_storage.SqliteStorage._rows = _rows_in_three_trips  # pyright: ignore[reportPrivateUsage]
        sqlite_storage._meta = _meta_decoded_each_time  # pyright: ignore[reportPrivateUsage]
        index.entry_cost = _entry_cost_by_json_dumps
        views.format_timestamp = _format_timestamp_by_strftime
        index.epoch_micros = _epoch_micros_by_parts
        return build_app(load_settings())
    raise AttributeError(name)
