"""Webhook endpoints in the SQLite database, shared by every process on the file.

Its own autocommit connection, like the OAuth store: each method is one short
statement, run in a worker thread; a swap is one ``UPDATE … WHERE version = ?``,
so two processes never both take a lease or advance a cursor.
"""

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from app.features.webhooks.domain import Endpoint, Stored
from app.infra.webhook_records import endpoint_json, endpoint_of

BUSY_TIMEOUT_MS = 5000
SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id TEXT PRIMARY KEY, prefix TEXT NOT NULL, version INTEGER NOT NULL,
    record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS webhook_endpoints_prefix ON webhook_endpoints (prefix);
"""


class SqliteWebhookStore:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.executescript(SCHEMA)
            self._connection = connection
        return self._connection

    def _run_now(
        self, sql: str, parameters: Sequence[object]
    ) -> tuple[list[sqlite3.Row], int]:
        with self._lock:
            cursor = self._db().execute(sql, parameters)
            return cursor.fetchall(), cursor.rowcount

    async def _run(
        self, sql: str, *parameters: object
    ) -> tuple[list[sqlite3.Row], int]:
        return await asyncio.to_thread(self._run_now, sql, parameters)

    async def create(self, endpoint: Endpoint) -> None:
        await self._run(
            "INSERT INTO webhook_endpoints (id, prefix, version, record) "
            "VALUES (?, ?, 1, ?)",
            endpoint.id,
            endpoint.prefix,
            endpoint_json(endpoint).decode(),
        )

    async def listing(self, prefix: str | None) -> list[Stored]:
        if prefix is None:
            rows, _ = await self._run(
                "SELECT record, version FROM webhook_endpoints ORDER BY id"
            )
        else:
            rows, _ = await self._run(
                "SELECT record, version FROM webhook_endpoints WHERE prefix = ? "
                "ORDER BY id",
                prefix,
            )
        return [Stored(endpoint_of(row[0]), str(row[1])) for row in rows]

    async def swap(self, endpoint: Endpoint, expected: str) -> str | None:
        _, changed = await self._run(
            "UPDATE webhook_endpoints SET record = ?, version = version + 1 "
            "WHERE id = ? AND version = ?",
            endpoint_json(endpoint).decode(),
            endpoint.id,
            int(expected),
        )
        return str(int(expected) + 1) if changed else None

    async def remove(self, prefix: str, endpoint_id: str) -> bool:
        _, removed = await self._run(
            "DELETE FROM webhook_endpoints WHERE id = ? AND prefix = ?",
            endpoint_id,
            prefix,
        )
        return removed > 0

    async def erase(self, prefix: str) -> None:
        await self._run("DELETE FROM webhook_endpoints WHERE prefix = ?", prefix)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
