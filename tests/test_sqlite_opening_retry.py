"""An opening that SQLite refuses at once for another opener's lock runs again.

Two openers that each hold a shared lock and both ask for the exclusive one (to
turn a rollback-journal file into WAL) would deadlock, so SQLite fails one at
once with "database is locked", without its busy handler. The opening runs its
pragmas and schema again until the busy timeout; any other refusal fails it at
once. ``test_sqlite_history_layout.py`` races real openers (the refusal comes
about 3 times in 100); here the refusals are scripted, so each case runs the
same every time.
"""

import sqlite3
from pathlib import Path

import aiosqlite
import pytest
from tenchi.errors import AppError

from app.infra.sqlite import connection as sqlite_connection
from app.infra.sqlite.connection import (
    is_locked,
    open_sqlite_connection,
    translate_sqlite_error,
)
from app.shared.errors import backend_unavailable
from tests.support.sqlite_file import sql

SCHEMA = "CREATE TABLE IF NOT EXISTS counts (n INTEGER)"
STATEMENTS = len(sqlite_connection.pragmas("full")) + 1  # the schema is one script


class Refusals:
    """The first ``count`` statements of the connections opened fail with
    ``message``, as SQLite refuses them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, message: str, count: int):
        self.message, self.left, self.statements = message, count, 0
        real_connect = aiosqlite.connect

        def connect(database: str, *, isolation_level: None) -> aiosqlite.Connection:
            opened = real_connect(database, isolation_level=isolation_level)
            execute, executescript = opened.execute, opened.executescript

            async def refused_execute(sql: str) -> aiosqlite.Cursor:
                self.refuse()
                return await execute(sql)

            async def refused_executescript(script: str) -> aiosqlite.Cursor:
                self.refuse()
                return await executescript(script)

            monkeypatch.setattr(opened, "execute", refused_execute)
            monkeypatch.setattr(opened, "executescript", refused_executescript)
            return opened

        monkeypatch.setattr(aiosqlite, "connect", connect)

    def refuse(self) -> None:
        self.statements += 1
        if self.left:
            self.left -= 1
            raise sqlite3.OperationalError(self.message)


def reason_of(error: AppError) -> object:
    assert error.definition is backend_unavailable
    return error.details["reason"]


async def test_an_opening_refused_at_once_for_a_lock_runs_again_and_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "wenchang.db"
    refusals = Refusals(monkeypatch, "database is locked", 3)

    async with open_sqlite_connection(str(database), schema=SCHEMA):
        pass

    assert refusals.statements == 3 + STATEMENTS
    assert sql(database, "SELECT name FROM sqlite_schema") == [("counts",)]
    assert sql(database, "PRAGMA journal_mode") == [("wal",)]


async def test_an_opening_refused_past_the_busy_timeout_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It gives up at the busy timeout (here 0.1 s), with refusals still to come:
    sixty retries take 1.2 s at least."""
    monkeypatch.setattr(sqlite_connection, "BUSY_TIMEOUT_MS", 100)
    refusals = Refusals(monkeypatch, "database is locked", 60)

    with pytest.raises(AppError) as raised:
        async with open_sqlite_connection(str(tmp_path / "w.db"), schema=SCHEMA):
            pass

    assert reason_of(raised.value) == "timeout"
    assert refusals.left > 0


async def test_an_opening_refused_for_another_reason_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusals = Refusals(monkeypatch, "disk I/O error", 1)

    with pytest.raises(AppError) as raised:
        async with open_sqlite_connection(str(tmp_path / "w.db"), schema=SCHEMA):
            pass

    assert reason_of(raised.value) == "unavailable"
    assert refusals.statements == 1


@pytest.mark.parametrize(
    ("message", "locked"),
    [
        ("database is locked", True),
        ("database table is locked", True),
        ("Database Is Locked", True),
        ("database is busy", True),
        ("DATABASE BUSY", True),
        ("disk I/O error", False),
        ("unable to open database file", False),
    ],
)
def test_a_lock_or_busy_refusal_in_any_case_is_a_lock_wait(
    message: str, locked: bool
) -> None:
    error = sqlite3.OperationalError(message)

    assert is_locked(error) is locked
    translated = translate_sqlite_error(error)
    assert isinstance(translated, AppError)
    assert reason_of(translated) == ("timeout" if locked else "unavailable")
