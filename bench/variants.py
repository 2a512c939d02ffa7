"""Variants of the Wenchang app that isolate one cost under real load.

Never used to serve. ``without_history`` is the production app with SQLite's
history triggers never installed (the history table exists, no version record is
written): the suite's history on ÷ off rows compare it with the real app.
``without_direct_calls`` is the app with the fast paths on but every MCP tool
call through the SDK's kernel: ``python -m bench.fast_paths`` measures
``mcp_direct`` and ``mcp_exchange`` apart against it.
"""

from starlette.applications import Starlette

from app.features.memory.ports import HistoryRetention
from app.infra import sqlite_history
from app.server.asgi import build_app
from app.server.fast.mcp_direct import DirectCalls
from app.server.settings import load_settings


def _no_history_triggers(retention: HistoryRetention) -> list[str]:
    return [
        "DROP TRIGGER IF EXISTS temp.history_on_insert",
        "DROP TRIGGER IF EXISTS temp.history_on_update",
    ]


def _no_plain_calls(self: DirectCalls, params: object) -> None:
    del self, params


def __getattr__(name: str) -> Starlette:
    if name == "without_history":
        sqlite_history._triggers = _no_history_triggers  # pyright: ignore[reportPrivateUsage]
        return build_app(load_settings())
    if name == "without_direct_calls":
        DirectCalls.plain = _no_plain_calls
        return build_app(load_settings(), freeze_heap=True)
    raise AttributeError(name)
