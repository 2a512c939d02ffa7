"""Per-call records of MCP tool calls, and the observer that logs them.

An observer is a plain callable taking one `ToolCallRecord`. It runs after the
result is ready and before it is sent; what it raises is logged and swallowed,
so a broken observer never changes what the client sees. The record's
`arguments` and `result` are read-only views of deep copies.
"""

import logging
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

logger = logging.getLogger("wenchang.mcp")


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One MCP tool call: its registered name, input, envelope and timing."""

    tool: str
    arguments: Mapping[str, Any]
    result: Mapping[str, Any]
    is_error: bool
    request_id: str
    duration_s: float

    @property
    def error_code(self) -> str | None:
        """The envelope's error code (or failure kind), None on success."""
        error = self.result.get("error")
        if not isinstance(error, Mapping):
            return None
        failure = cast(Mapping[str, Any], error)
        code = failure.get("code") or failure.get("kind")
        return str(code) if code else None


ToolCallObserver = Callable[[ToolCallRecord], None]


def frozen_copy(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(deepcopy(dict(value)))


def log_tool_call(record: ToolCallRecord) -> None:
    """Log the call's outcome only: never its arguments or result."""
    fields = {
        "tool": record.tool,
        "is_error": record.is_error,
        "error_code": record.error_code,
        "duration_s": round(record.duration_s, 6),
        "request_id": record.request_id,
    }
    logger.info(
        "mcp tool call tool=%s is_error=%s error_code=%s duration_s=%.6f request_id=%s",
        *fields.values(),
        extra={"wenchang": fields},
    )


def notify(observers: Sequence[ToolCallObserver], record: ToolCallRecord) -> None:
    for observer in observers:
        try:
            observer(record)
        except Exception:
            # An observer is telemetry: its failure must not fail the call.
            logger.exception("on_call observer failed for %s", record.tool)
