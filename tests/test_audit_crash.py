"""Crash safety of the audit log: ``kill -9`` amid acknowledged writes on SQLite.

Writers stream version-guarded writes (and reads, whose events are buffered)
at a real ``wenchang serve``; after a random number of acknowledgements the
server gets SIGKILL. Every write the server acknowledged must then have
exactly one ``write_file`` event, with the version it answered, in what
the log answers (events the killed server staged and never moved included).
Since the event commits in the write's own transaction, this holds for every
write that landed, acknowledged or cut off by the kill: the landed
versions (the history's records) and the events' versions are the same set,
each event once.
"""

import asyncio
import os
import random
import sqlite3
from pathlib import Path

import httpx

from app.features.audit.ports import AuditSelection, Subject
from app.infra.sqlite.audit_log import open_sqlite_audit_log
from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.server import ServerProcess, start_server

CYCLES = int(os.environ.get("WENCHANG_CRASH_CYCLES", "2"))
WRITERS = 4
ACKS_BEFORE_KILL = (20, 60)


async def write_until_killed(
    client: httpx.AsyncClient, name: str, acked: list[str], acks: asyncio.Queue[None]
) -> None:
    path = f"/v1/files/user/crash/{name}"
    precondition = {"If-None-Match": "*"}
    for serial in range(10_000):
        body: dict[str, object] = {
            "content": f"- [stated] {serial}\n",
            "description": "d",
            "aliases": [],
        }
        try:
            written = await client.put(path, json=body, headers=precondition)
            await client.get(path)
        except httpx.TransportError:
            return
        assert written.status_code in (200, 201), written.text
        version = written.json()["version"]
        acked.append(version)
        precondition = {"If-Match": f'"{version}"'}
        acks.put_nowait(None)


async def kill_after(server: ServerProcess, acks: asyncio.Queue[None]) -> None:
    for _ in range(random.randint(*ACKS_BEFORE_KILL)):
        await acks.get()
    server.process.kill()  # SIGKILL: no shutdown handler runs


async def crash_cycle(
    server: ServerProcess, auth: dict[str, str], run: int
) -> list[str]:
    acked: list[str] = []
    acks: asyncio.Queue[None] = asyncio.Queue()
    async with httpx.AsyncClient(
        base_url=server.url, headers=auth, timeout=30
    ) as client:
        await asyncio.gather(
            kill_after(server, acks),
            *(
                write_until_killed(client, f"r{run}w{n}", acked, acks)
                for n in range(WRITERS)
            ),
        )
    server.process.wait(timeout=10)
    return acked


async def recorded_writes(database: Path) -> list[str]:
    """The version of each ``ok`` write_file event the log answers, one per event.

    Asked of the log (as ``GET /v1/audit`` does), not of a table: events the
    killed server staged but never moved count only if a query finds them.
    """
    selection = AuditSelection(subjects=(Subject("user", "crash"),))
    async with open_sqlite_audit_log(str(database), max_days=365) as log:
        page = await log.query(selection, before=None, limit=1_000_000)
    return [
        event.version or ""
        for event in page.events
        if event.operation == "write_file" and event.outcome == "ok"
    ]


def landed_writes(database: Path) -> set[str]:
    """The version of every write that landed: each left a version record."""
    connection = sqlite3.connect(database)
    try:
        rows = connection.execute(
            "SELECT version FROM memory_history WHERE operation = 'write_file'"
        ).fetchall()
    finally:
        connection.close()
    return {row[0] for row in rows}


def test_every_acknowledged_write_has_its_event_after_kill_9(tmp_path: Path) -> None:
    """No acknowledged mutation is missing from the audit log after SIGKILL."""
    secret, _ = create_token(
        tmp_path / "tokens.json", {"user": Grant("crash", "owner")}
    )
    auth = {"Authorization": f"Bearer {secret}"}
    database = tmp_path / "wenchang.db"
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{database}",
        "WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json"),
        "WENCHANG_RATE_LIMIT": "0",
    }
    acknowledged: list[str] = []

    for cycle in range(CYCLES):
        server = start_server(tmp_path, logs=tmp_path / "logs", settings=settings)
        try:
            server.wait_until_healthy()
            acknowledged += asyncio.run(crash_cycle(server, auth, cycle))
        finally:
            server.stop()

    assert len(acknowledged) >= CYCLES * ACKS_BEFORE_KILL[0]
    events = asyncio.run(recorded_writes(database))
    assert len(events) == len(set(events)), "a write has more than one event"
    assert set(acknowledged) <= set(events)
    assert set(events) == landed_writes(database)
