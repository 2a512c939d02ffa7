"""SQLite idempotency records: reservations and replays shared by every process.

Each transition is one statement (an upsert that claims a free or expired key,
an update fenced by the reservation token, a fenced delete), so the store is
atomic across processes sharing the file without a transaction of our own.
The memory write a record protects lives in the Storage port, which commits on
its own; a crash between the two leaves a reservation that expires after its
lease, after which the version guard of the retried write decides.
"""

import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager

from tenchi.idempotency import (
    IdempotencyConflict,
    IdempotencyDecision,
    IdempotencyInProgress,
    IdempotencyReplay,
    IdempotencyReservation,
)

from app.infra.request_guards import ReservationStore, in_progress
from app.infra.sqlite.connection import DEFAULT_SYNCHRONOUS, Synchronous
from app.infra.sqlite.guard_store import SqliteGuardStore, open_sqlite_guard_store

CLAIM_ATTEMPTS = 3

_EXPIRED = (
    "((r.state = 'reserved' AND r.reserved_until <= :now) OR "
    "(r.state = 'completed' AND r.completed_until IS NOT NULL "
    "AND r.completed_until <= :now))"
)
_CLAIM = f"""
INSERT INTO idempotency_records AS r
    (namespace, scope, key, fingerprint, state, token, result_json,
     reserved_until, completed_until)
VALUES (:namespace, :scope, :key, :fingerprint, 'reserved', :token, NULL,
        :now + :ttl, NULL)
ON CONFLICT (namespace, scope, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'reserved', token = excluded.token,
    result_json = NULL, reserved_until = excluded.reserved_until,
    completed_until = NULL
WHERE {_EXPIRED}
RETURNING token
"""
_LOOK = """
SELECT fingerprint, state, result_json, reserved_until FROM idempotency_records
WHERE namespace = :namespace AND scope = :scope AND key = :key
"""
_FENCE = (
    "namespace = :namespace AND scope = :scope AND key = :key "
    "AND fingerprint = :fingerprint AND token = :token AND state = 'reserved'"
)
_COMPLETE = f"""
UPDATE idempotency_records SET state = 'completed', result_json = :result,
    completed_until = :until
WHERE {_FENCE} AND reserved_until > :now
RETURNING key
"""
_ABANDON = f"DELETE FROM idempotency_records WHERE {_FENCE}"
_SWEEP = f"DELETE FROM idempotency_records AS r WHERE {_EXPIRED}"
_CHECKPOINT = "PRAGMA wal_checkpoint(TRUNCATE)"
_ERASE = """
DELETE FROM idempotency_records
WHERE substr(scope, 1, length(:prefix)) = :prefix
RETURNING key
"""
_ERASE_FILE = """
DELETE FROM idempotency_records
WHERE substr(scope, 1, length(:prefix)) = :prefix AND instr(fingerprint, :tag) > 0
RETURNING key
"""


def _fence(reservation: IdempotencyReservation) -> dict[str, object]:
    return {
        "namespace": reservation.namespace,
        "scope": reservation.scope,
        "key": reservation.key,
        "fingerprint": reservation.fingerprint,
        "token": reservation.token,
    }


class SqliteIdempotencyStore(SqliteGuardStore, ReservationStore):
    """The IdempotencyStore port on one autocommit connection."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS idempotency_records (
        namespace TEXT NOT NULL,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL,
        token TEXT NOT NULL,
        result_json BLOB,
        reserved_until REAL NOT NULL,
        completed_until REAL,
        PRIMARY KEY (namespace, scope, key)
    ) WITHOUT ROWID
    """
    SWEEP = _SWEEP

    async def claim(
        self, candidate: IdempotencyReservation, lease_seconds: float
    ) -> IdempotencyDecision:
        await self._sweep(self._clock())
        claim = _fence(candidate)
        identity = {name: claim[name] for name in ("namespace", "scope", "key")}
        for _ in range(CLAIM_ATTEMPTS):
            now = self._clock()
            if await self._rows(_CLAIM, claim | {"now": now, "ttl": lease_seconds}):
                return candidate
            rows = await self._rows(_LOOK, identity)
            if rows:
                return _decision(rows[0], candidate.fingerprint, now)
            # Abandoned between the claim and the look: claim again.
        return IdempotencyInProgress(retry_after_seconds=1)

    async def settle(self, reservation: IdempotencyReservation, result: bytes) -> bool:
        now = self._clock()
        ttl = reservation.completed_ttl
        until = None if ttl is None else now + ttl
        parameters = _fence(reservation) | {"result": result, "until": until}
        return bool(await self._rows(_COMPLETE, parameters | {"now": now}))

    async def abandon(self, reservation: IdempotencyReservation) -> None:
        await self._rows(_ABANDON, _fence(reservation))

    async def erase_scope(self, prefix: str) -> int:
        return await self._erased([(_ERASE, {"prefix": prefix})])

    async def erase_files(self, prefix: str, tags: Sequence[str]) -> int:
        return await self._erased(
            [(_ERASE_FILE, {"prefix": prefix, "tag": tag}) for tag in tags]
        )

    async def _erased(self, statements: list[tuple[str, dict[str, object]]]) -> int:
        # secure_delete (every connection's) overwrites the freed cells; the
        # checkpoint then copies those pages over the file's old ones and
        # empties the WAL, so no page image keeps an erased key (a busy
        # checkpoint leaves it to the next one, as SQLite's own would).
        erased = 0
        for statement, parameters in statements:
            erased += len(await self._rows(statement, parameters))
        if erased:
            await self._rows(_CHECKPOINT, {})
        return erased


def _decision(row: sqlite3.Row, fingerprint: str, now: float) -> IdempotencyDecision:
    stored_fingerprint, state, result_json, reserved_until = row
    if stored_fingerprint != fingerprint:
        return IdempotencyConflict()
    if state == "completed":
        return IdempotencyReplay(result_json=bytes(result_json))
    return in_progress(float(reserved_until) - now)


def open_sqlite_idempotency_store(
    path: str,
    *,
    clock: Callable[[], float] = time.time,
    synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
) -> AbstractAsyncContextManager[SqliteIdempotencyStore]:
    """A store on its own connection to ``path`` (usually the memory database).

    A record is as durable as the write it protects, so a retry after power
    loss still replays instead of applying twice.
    """
    return open_sqlite_guard_store(
        SqliteIdempotencyStore, path, clock=clock, synchronous=synchronous
    )
