"""A served app on SQLite (the audit log in the same database) and its tokens."""

import sqlite3
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from tenchi.testing import open_http

from app.features.audit.domain.marks import new_event_id
from app.features.audit.ports import AuditEvent
from app.features.memory.domain import file_key
from app.features.memory.ports import FileMetadata, Write
from app.infra.port_wiring import open_storage
from app.infra.sqlite.audit_events import staged_record
from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant

SEEDED = FileMetadata("tea notes", (), ("task",), datetime(2026, 1, 1, tzinfo=UTC))


@dataclass(frozen=True, slots=True)
class Holder:
    headers: dict[str, str]
    token_id: str


@dataclass(frozen=True, slots=True)
class Audited:
    http: httpx.AsyncClient
    settings: Settings
    alice: Holder
    bob: Holder
    viewer: Holder
    both: Holder
    """Alice's ``user`` scope and the ``team`` scope of entity ``acme``."""


def _holder(path: Path, grants: dict[str, Grant], label: str | None) -> Holder:
    secret, record = create_token(path, grants, label=label)
    return Holder({"Authorization": f"Bearer {secret}"}, record.token_id)


@asynccontextmanager
async def open_audited(tmp_path: Path, **overrides: Any) -> AsyncGenerator[Audited]:
    """SQLite storage (so the audit log is the same database), four tokens."""
    tokens = tmp_path / "tokens.json"
    settings = Settings(
        storage=f"sqlite:///{tmp_path / 'wenchang.db'}",
        tokens_file=str(tokens),
        cursor_secret="audit-tests-cursor-secret",
        index_cache="none",
        **overrides,
    )
    async with open_storage(settings.storage) as storage:
        for name in ("tea", "coffee"):
            key = file_key("user", "alice", "notes", name)
            await storage.put(Write(key, b"- [stated] likes oolong\n", SEEDED))
        team = file_key("team", "acme", "plans", "roadmap")
        await storage.put(Write(team, b"- [stated] oolong supplier\n", SEEDED))
    alice = _holder(tokens, {"user": Grant("alice", "owner")}, "claude")
    bob = _holder(tokens, {"user": Grant("bob", "owner")}, None)
    viewer = _holder(tokens, {"user": Grant("alice", "viewer")}, "viewer-app")
    both = _holder(
        tokens,
        {"user": Grant("alice", "owner"), "team": Grant("acme", "owner")},
        "team-agent",
    )
    app = build_app(settings, resolver=TokenFileResolver(tokens))
    async with open_http(app) as http:
        yield Audited(http, settings, alice, bob, viewer, both)


def raw_bytes(root: Path) -> bytes:
    """The database, its WAL and shared-memory file, byte for byte."""
    paths = [root / f"wenchang.db{suffix}" for suffix in ("", "-wal", "-shm")]
    return b"".join(path.read_bytes() for path in paths if path.exists())


def staged_write(
    name: str, *, entity_id: str = "alice", area: str = "notes"
) -> AuditEvent:
    """A ``write_file`` of ``user`` ``area/name`` (Alice's ``notes`` unless told)."""
    return AuditEvent(
        id=new_event_id(),
        at=datetime.now(UTC),
        request_id="5" * 32,
        surface="http",
        actor="claude",
        token_id=None,
        operation="write_file",
        scope="user",
        entity_id=entity_id,
        area=area,
        name=name,
        outcome="ok",
        version=None,
    )


def stage_event(database: Path, event: AuditEvent, version: str) -> None:
    """Leave ``event`` staged, as a write of a process killed before it moved it."""
    with closing(sqlite3.connect(database, isolation_level=None)) as connection:
        connection.execute(
            "INSERT INTO audit_staged (record, version) VALUES (?, ?)",
            (staged_record(event), version),
        )


def staged_count(database: Path) -> int:
    with closing(sqlite3.connect(database)) as connection:
        return connection.execute("SELECT count(*) FROM audit_staged").fetchone()[0]
