"""A backlog of audit events larger than one SQLite statement can bind still drains."""

import io
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.features.audit.ports import AuditEvent
from app.infra.port_wiring import open_audit_log

BACKLOG = 30_000
"""Events at 9 variables each: past this SQLite build's limit (250,000) and
SQLite's default (32,766) alike, as a backlog kept through an outage can be."""


def _event(number: int, at: datetime) -> AuditEvent:
    return AuditEvent(
        *(uuid.uuid4().hex, at + timedelta(microseconds=number), "r" * 32),
        *("http", "http", "tok_backlog", "read_file", "user", "alice", "notes"),
        *(f"f{number}", "ok", None),
    )


async def test_a_backlog_past_the_variable_limit_is_written_in_full(
    tmp_path: Path,
) -> None:
    """One flush of 30,000 events lands every one (in statements SQLite takes)."""
    at = datetime.now(UTC) - timedelta(hours=1)
    backlog = [_event(n, at) for n in range(BACKLOG)]
    url = f"sqlite:///{tmp_path / 'wenchang.db'}"
    async with open_audit_log(url, max_days=365, stream=io.StringIO) as log:
        await log.record(backlog, durable=True)

    with sqlite3.connect(tmp_path / "wenchang.db") as database:
        rows = database.execute("SELECT count(*) FROM audit_events").fetchone()
    assert rows == (BACKLOG,)
