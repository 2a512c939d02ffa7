"""Tool-call records and the default observer that logs them."""

import logging
from collections.abc import Callable
from copy import deepcopy
from typing import Any

import pytest

from app.server.mcp.telemetry import ToolCallRecord, frozen_view, log_tool_call, notify

SECRET = "- [stated] Account 12345"


def record(result: dict[str, Any], *, is_error: bool = False) -> ToolCallRecord:
    return ToolCallRecord(
        tool="append_line",
        arguments=frozen_view({"line": SECRET, "aliases": ["a"]}),
        result=frozen_view(result),
        is_error=is_error,
        request_id="7",
        duration_s=0.25,
    )


CONFLICT = {
    "schema_version": 2,
    "ok": False,
    "error": {
        "kind": "application_error",
        "code": "VERSION_CONFLICT",
        "details": {"content": SECRET},
    },
}


def test_log_tool_call_logs_the_outcome_and_no_payload(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Tool, error flag, code, duration and request id are logged; content is not."""
    caplog.set_level(logging.INFO, logger="wenchang.mcp")

    log_tool_call(record(CONFLICT, is_error=True))

    [logged] = caplog.records
    assert "tool=append_line" in logged.getMessage()
    assert "error_code=VERSION_CONFLICT" in logged.getMessage()
    assert "request_id=7" in logged.getMessage()
    assert "12345" not in caplog.text
    assert logged.__dict__["wenchang"] == {
        "tool": "append_line",
        "is_error": True,
        "error_code": "VERSION_CONFLICT",
        "duration_s": 0.25,
        "request_id": "7",
    }


def test_record_error_code_falls_back_to_the_failure_kind() -> None:
    """Failures without an application code report their kind; successes none."""
    refused = {"ok": False, "error": {"kind": "approval_denied", "message": "no"}}

    assert record(refused, is_error=True).error_code == "approval_denied"
    assert record({"ok": True, "result": {}}).error_code is None


def test_an_observer_cannot_change_the_record_or_the_original() -> None:
    """Arguments and result are read-only at every depth; the original stays."""
    original: dict[str, Any] = {
        "ok": True,
        "result": {"aliases": ["x"], "entries": [{"name": "tea", "sources": ["a"]}]},
    }
    before = deepcopy(original)
    seen: Any = record(original).result
    attempts: list[Callable[[], object]] = [
        lambda: seen.__setitem__("ok", False),
        lambda: seen.__delitem__("ok"),
        lambda: seen.pop("ok"),
        lambda: seen.update(ok=False),
        lambda: seen["result"].__setitem__("aliases", []),
        lambda: seen["result"]["aliases"].append("y"),
        lambda: seen["result"]["aliases"].__setitem__(0, "y"),
        lambda: seen["result"]["entries"][0].__setitem__("name", "coffee"),
        lambda: seen["result"]["entries"][0]["sources"].clear(),
        lambda: seen["result"]["entries"][:1][0].__setitem__("name", "coffee"),
        lambda: seen.get("result").setdefault("capped", []),
        lambda: dict(seen.items())["result"].__setitem__("x", 1),
    ]

    for attempt in attempts:
        with pytest.raises((TypeError, AttributeError)):
            attempt()

    assert original == before
    assert seen == before
    assert seen["result"]["aliases"] == ["x"]


def test_notify_swallows_and_logs_an_observer_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A raising observer is logged; the observers after it still run."""
    seen: list[ToolCallRecord] = []

    def broken(_: ToolCallRecord) -> None:
        raise RuntimeError("observer bug")

    notify((broken, seen.append), record({"ok": True}))

    assert len(seen) == 1
    assert "on_call observer failed for append_line" in caplog.text
