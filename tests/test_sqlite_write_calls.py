"""A SQLite write runs its statements without any call back into Python.

Each call a statement makes into Python (a SQL function) re-takes the GIL on
the write thread, which the event loop's thread holds while it serves other
requests, and hides work from a reader of the code. A write of a file with its
history record, marker and audit event runs plain statements only.
"""

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from app.features.audit.ports import PendingEvent
from app.features.memory.ports import Change, Write
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import opened_database, sql
from tests.test_sqlite_edits import CHANGE, KEY, META


async def test_no_statement_of_a_write_calls_into_python(tmp_path: Path) -> None:
    statements: list[str] = []
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        # A function SQLite calls is entered while a statement's ``execute``
        # (a C call) has not returned.
        name = getattr(arg, "__name__", "")
        if event == "c_call" and name in {"execute", "fetchall", "fetchone"}:
            statements.append(name)
        elif event in {"c_return", "c_exception"} and name in {
            "execute",
            "fetchall",
            "fetchone",
        }:
            statements.pop()
        elif event == "call" and statements:
            called.append(frame.f_code.co_name)

    def watch(on: bool) -> None:
        sys.setprofile(profile if on else None)  # the write thread's own

    async with opened_database(tmp_path) as opened:
        version = await opened.storage.put_if_version(Write(KEY, b"x\n", META), None)
        await opened.group.call(lambda _: watch(True))
        try:
            event = PendingEvent(lambda: staged_write("a"))
            change = Change(CHANGE.operation, CHANGE.actor, CHANGE.at, event=event)
            write = Write(KEY, b"- [stated] green\n" * 100, META, change=change)
            assert await opened.storage.put_if_version(write, version) is not None
        finally:
            await opened.group.call(lambda _: watch(False))
        staged = sql(opened.database, "SELECT count(*) FROM audit_staged")

    assert staged == [(1,)]  # the write ran its whole landing
    assert called == []
