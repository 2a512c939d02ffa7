"""A SQLite write statement calls into Python as little as it can.

Each call a statement makes into Python (a SQL function of ours) re-takes the
GIL on the storage thread, which the event loop's thread holds while it serves
other requests. A write of short content with an audit event calls only what
needs Python: the entity's marker id and taking back its held event.
"""

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from app.features.audit.ports import PendingEvent, close_pending, open_pending
from app.features.memory.ports import Write
from tests.support.audited_app import staged_write
from tests.support.sqlite_file import opened_database
from tests.test_sqlite_edits import CHANGE, KEY, META


async def test_a_short_write_calls_only_the_marker_id_and_take(
    tmp_path: Path,
) -> None:
    called: list[str] = []

    def profile(frame: FrameType, event: str, _: Any) -> None:
        # A function SQLite calls is entered straight from the frame that runs
        # the statement (``_in_savepoint``), with no Python call between them.
        caller = frame.f_back
        if event == "call" and caller and caller.f_code.co_name == "_in_savepoint":
            called.append(frame.f_code.co_name)

    def watch(on: bool) -> int:
        sys.setprofile(profile if on else None)  # the storage thread's own
        return 0

    async with opened_database(tmp_path) as opened:
        version = await opened.storage.put_if_version(Write(KEY, b"x\n", META), None)
        await opened.group.run(lambda _: watch(True))
        token = open_pending(PendingEvent(lambda: staged_write("a")))
        try:
            write = Write(KEY, b"- [stated] green\n", META, change=CHANGE)
            assert await opened.storage.put_if_version(write, version) is not None
        finally:
            close_pending(token)
            await opened.group.run(lambda _: watch(False))

    assert sorted(called) == ["_of_key", "take"]
