"""OAuth clients, codes and token digests in the SQLite database.

Its own connection in autocommit mode: each method is one short statement
(a code is taken and a refresh token marked used by a single conditional
statement, so two processes on one file never both win). Calls run on the
caller's thread; OAuth writes are rare and a lookup is one primary-key read.
"""

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.features.oauth.ports import (
    ClientGrants,
    ClientKind,
    ClientRecord,
    CodeRecord,
    TokenKind,
    TokenRecord,
)
from app.shared.identity import Grant

BUSY_TIMEOUT_MS = 5000
SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_clients (
    client_id TEXT PRIMARY KEY, name TEXT NOT NULL, redirect_uris TEXT NOT NULL,
    kind TEXT NOT NULL, created_at REAL NOT NULL, last_used_at REAL);
CREATE TABLE IF NOT EXISTS oauth_codes (
    digest TEXT PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL, scopes TEXT NOT NULL, grants TEXT NOT NULL,
    resource TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_tokens (
    digest TEXT PRIMARY KEY, kind TEXT NOT NULL, family TEXT NOT NULL,
    client_id TEXT NOT NULL, scopes TEXT NOT NULL, grants TEXT NOT NULL,
    resource TEXT NOT NULL, expires_at REAL NOT NULL, used INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS oauth_tokens_family ON oauth_tokens (family);
CREATE INDEX IF NOT EXISTS oauth_tokens_client ON oauth_tokens (client_id);
"""
TOKEN_COLUMNS = (
    "digest, kind, family, client_id, scopes, grants, resource, expires_at, used"
)
CODE_COLUMNS = (
    "digest, client_id, redirect_uri, code_challenge, scopes, grants, resource, "
    "expires_at"
)


def _grants_text(grants: Mapping[str, Grant]) -> str:
    return json.dumps({s: [g.entity_id, g.role] for s, g in sorted(grants.items())})


def _grants(text: str) -> dict[str, Grant]:
    loaded: dict[str, list[str]] = json.loads(text)
    return {scope: Grant(pair[0], pair[1]) for scope, pair in loaded.items()}


def _token(row: sqlite3.Row) -> TokenRecord:
    kind: TokenKind = "refresh" if row[1] == "refresh" else "access"
    return TokenRecord(
        digest=row[0],
        kind=kind,
        family=row[2],
        client_id=row[3],
        scopes=tuple(row[4].split()),
        grants=_grants(row[5]),
        resource=row[6],
        expires_at=row[7],
        used=bool(row[8]),
    )


def _client(row: sqlite3.Row) -> ClientRecord:
    kind: ClientKind = (
        "metadata_document" if row[3] == "metadata_document" else "registered"
    )
    return ClientRecord(
        client_id=row[0],
        name=row[1],
        redirect_uris=tuple(json.loads(row[2])),
        kind=kind,
        created_at=row[4],
        last_used_at=row[5],
    )


@dataclass(frozen=True, slots=True)
class _Done:
    rows: list[sqlite3.Row]
    rowcount: int

    def fetchone(self) -> sqlite3.Row | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[sqlite3.Row]:
        return self.rows


class SqliteOAuthStore:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        # Opened on first use: building the app touches no file.
        if self._connection is None:
            connection = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.executescript(SCHEMA)
            self._connection = connection
        return self._connection

    def _run(self, sql: str, parameters: Sequence[object] = ()) -> "_Done":
        # Rows are fetched under the lock: the CLI and the server's threads
        # share nothing, but one connection must finish a statement at a time.
        with self._lock:
            cursor = self._db().execute(sql, parameters)
            return _Done(cursor.fetchall(), cursor.rowcount)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def save_client(self, client: ClientRecord) -> None:
        self._run(
            "INSERT OR REPLACE INTO oauth_clients VALUES (?, ?, ?, ?, ?, ?)",
            (
                client.client_id,
                client.name,
                json.dumps(list(client.redirect_uris)),
                client.kind,
                client.created_at,
                client.last_used_at,
            ),
        )

    def get_client(self, client_id: str) -> ClientRecord | None:
        row = self._run(
            "SELECT * FROM oauth_clients WHERE client_id = ?", (client_id,)
        ).fetchone()
        return None if row is None else _client(row)

    def touch_client(self, client_id: str, at: float) -> None:
        self._run(
            "UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?",
            (at, client_id),
        )

    def drop_unused_clients(self, registered_before: float) -> int:
        rows = self._run(
            "DELETE FROM oauth_clients WHERE kind = 'registered' AND created_at < ? "
            "AND coalesce(last_used_at, 0) < ? RETURNING client_id",
            (registered_before, registered_before),
        ).fetchall()
        for (client_id,) in rows:
            self.revoke_client(client_id)
        return len(rows)

    def save_code(self, code: CodeRecord) -> None:
        self._run(
            f"INSERT INTO oauth_codes ({CODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                code.digest,
                code.client_id,
                code.redirect_uri,
                code.code_challenge,
                " ".join(code.scopes),
                _grants_text(code.grants),
                code.resource,
                code.expires_at,
            ),
        )

    def take_code(self, digest: str) -> CodeRecord | None:
        row = self._run(
            f"DELETE FROM oauth_codes WHERE digest = ? RETURNING {CODE_COLUMNS}",
            (digest,),
        ).fetchone()
        if row is None:
            return None
        return CodeRecord(
            digest=row[0],
            client_id=row[1],
            redirect_uri=row[2],
            code_challenge=row[3],
            scopes=tuple(row[4].split()),
            grants=_grants(row[5]),
            resource=row[6],
            expires_at=row[7],
        )

    def save_tokens(self, tokens: Sequence[TokenRecord]) -> None:
        rows = [
            (
                t.digest,
                t.kind,
                t.family,
                t.client_id,
                " ".join(t.scopes),
                _grants_text(t.grants),
                t.resource,
                t.expires_at,
                int(t.used),
            )
            for t in tokens
        ]
        with self._lock:
            self._db().executemany(
                f"INSERT INTO oauth_tokens ({TOKEN_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def find_token(self, digest: str) -> TokenRecord | None:
        row = self._run(
            f"SELECT {TOKEN_COLUMNS} FROM oauth_tokens WHERE digest = ?", (digest,)
        ).fetchone()
        return None if row is None else _token(row)

    def mark_used(self, digest: str) -> bool:
        cursor = self._run(
            "UPDATE oauth_tokens SET used = 1 WHERE digest = ? AND used = 0", (digest,)
        )
        return cursor.rowcount == 1

    def revoke_family(self, family: str) -> int:
        return self._run(
            "DELETE FROM oauth_tokens WHERE family = ?", (family,)
        ).rowcount

    def revoke_client(self, client_id: str) -> int:
        return self._run(
            "DELETE FROM oauth_tokens WHERE client_id = ?", (client_id,)
        ).rowcount

    def clients_with_tokens(self, now: float) -> list[ClientGrants]:
        rows = self._run(
            f"SELECT {TOKEN_COLUMNS} FROM oauth_tokens WHERE expires_at > ? "
            "ORDER BY client_id, expires_at",
            (now,),
        ).fetchall()
        newest = {row[3]: _token(row) for row in rows}
        listed: list[ClientGrants] = []
        for client_id, token in newest.items():
            client = self.get_client(client_id)
            if client is not None:
                listed.append(ClientGrants(client, token.grants, token.scopes))
        return listed

    def sweep(self, now: float) -> None:
        self._run("DELETE FROM oauth_codes WHERE expires_at <= ?", (now,))
        self._run("DELETE FROM oauth_tokens WHERE expires_at <= ?", (now,))
