"""The SQLite audit log's upkeep: the retention sweep at most once a minute, and
a move of staged events that fails undone whole.

The sweep's clock is the module's ``time.monotonic``; a test gives the module a
clock of its own (the process's ``time`` is left alone).
"""

import sqlite3
from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.audit.ports import AuditSelection, Subject
from app.infra.sqlite import audit_log
from app.infra.sqlite.audit_events import STAGE, staged_record
from app.infra.sqlite.audit_log import SqliteAuditLog, open_sqlite_audit_log
from app.shared.errors import backend_unavailable
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import sql

ALICE = AuditSelection(subjects=(Subject("user", "alice"),))


class Monotonic:
    """The module's ``time``: a monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Monotonic:
    moved = Monotonic()
    monkeypatch.setattr(audit_log, "time", moved)
    return moved


@pytest.fixture
async def log(tmp_path: Path) -> AsyncGenerator[SqliteAuditLog]:
    async with open_sqlite_audit_log(str(tmp_path / "wenchang.db"), max_days=1) as it:
        yield it


def plant_old_event(database: Path) -> str:
    """An event past the log's one day of retention, as an older process left it."""
    event = replace(staged_write("old"), at=datetime.now(UTC) - timedelta(days=2))
    at = event.at.isoformat()
    sql(
        database,
        "INSERT INTO audit_events (id, at, scope, entity_id, operation, area, name, "
        "record) VALUES (?, ?, 'user', 'alice', 'write_file', 'notes', 'old', '{}')",
        event.id,
        at,
    )
    return event.id


def ids(database: Path) -> set[str]:
    return {row[0] for row in sql(database, "SELECT id FROM audit_events")}


async def test_sqlite_retention_sweeps_at_most_once_a_minute(
    tmp_path: Path, clock: Monotonic, log: SqliteAuditLog
) -> None:
    database = tmp_path / "wenchang.db"
    await log.record([staged_write("a")], durable=True)  # the first write sweeps
    old = plant_old_event(database)

    clock.now += 59.5
    await log.record([staged_write("b")], durable=True)
    assert old in ids(database)  # swept less than a minute ago: left

    clock.now += 0.5
    await log.record([staged_write("c")], durable=True)
    assert old not in ids(database)  # a minute since the last sweep: gone

    old = plant_old_event(database)
    clock.now += 30
    await log.record([staged_write("d")], durable=True)
    assert old in ids(database)  # the minute counts from the last sweep


def write_lock_is_free(database: Path) -> bool:
    other = sqlite3.connect(database, isolation_level=None, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


async def test_a_sqlite_move_of_staged_events_that_fails_is_undone(
    tmp_path: Path, log: SqliteAuditLog
) -> None:
    """A staged record the move cannot read fails the move: nothing moved, the
    write lock released, the records still staged; once it is gone the rest move."""
    database = tmp_path / "wenchang.db"
    event = staged_write("tea")
    sql(database, STAGE, staged_record(event), "v1")
    sql(database, STAGE, "not json", "v2")

    with pytest.raises(AppError) as raised:
        await log.query(ALICE, before=None, limit=10)

    assert raised.value.definition is backend_unavailable
    assert write_lock_is_free(database)
    assert ids(database) == set()
    assert len(sql(database, "SELECT record FROM audit_staged")) == 2
    sql(database, "DELETE FROM audit_staged WHERE record = 'not json'")
    page = await log.query(ALICE, before=None, limit=10)
    assert [e.id for e in page.events] == [event.id]
