"""Variants of the Wenchang app that isolate one cost under real load.

Never used to serve. ``without_history`` is the production app with SQLite's
version records never written (the history table exists, ``HistoryRecorder``
records nothing): the suite's history on ÷ off rows compare it with the real app.
``without_direct_calls`` is the app with the fast paths on but every MCP tool
call through the SDK's kernel: ``python -m bench.fast_paths`` measures
``mcp_direct`` and ``mcp_exchange`` apart against it.
"""

import sqlite3

from starlette.applications import Starlette

from app.infra.sqlite.history import Entry, HistoryRecorder
from app.server.asgi import build_app
from app.server.fast.mcp_direct import DirectCalls
from app.server.settings import load_settings


def _record_nothing(
    self: HistoryRecorder, db: sqlite3.Cursor, key: str, entry: Entry, at: str
) -> None:
    return None


def _no_plain_calls(self: DirectCalls, params: object) -> None:
    del self, params


def __getattr__(name: str) -> Starlette:
    if name == "without_history":
        HistoryRecorder.record = _record_nothing
        return build_app(load_settings())
    if name == "without_direct_calls":
        DirectCalls.plain = _no_plain_calls
        return build_app(load_settings(), freeze_heap=True)
    raise AttributeError(name)
