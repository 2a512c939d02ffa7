"""Per-call records of MCP tool calls, and the observer that logs them.

An observer is a plain callable taking one `ToolCallRecord`. It runs after the
result is ready and before it is sent; what it raises is logged and swallowed,
so a broken observer never changes what the client sees. The record's
`arguments` and `result` are read-only views (`frozen_view`): no observer can
change the record or, through it, what the client is sent. A view costs
nothing at call time (a deep copy of a 500-entry index cost 3 ms per call); the
call's input and envelope are not changed after the call, so the view shows
what was sent.
"""

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast, overload

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
        failure = cast(Mapping[str, object], error)
        code = failure.get("code") or failure.get("kind")
        return str(code) if code else None


ToolCallObserver = Callable[[ToolCallRecord], None]


class FrozenMapping(Mapping[str, object]):
    """A read-only view of a JSON object; what it holds is viewed read-only too."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, object]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return frozen(self._data[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"


class FrozenList(Sequence[object]):
    """A read-only view of a JSON array; equal to a list with the same items."""

    __slots__ = ("_data",)

    def __init__(self, data: Sequence[object]) -> None:
        self._data = data

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> "FrozenList": ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return FrozenList(self._data[index])
        return frozen(self._data[index])

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenList | list | tuple):
            return list(self) == list(cast(Sequence[object], other))
        return NotImplemented

    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __repr__(self) -> str:
        return f"FrozenList({self._data!r})"


def frozen(value: Any) -> Any:
    """`value` as observers see it: objects and arrays viewed read-only."""
    if isinstance(value, FrozenMapping | FrozenList):
        return value
    if isinstance(value, Mapping):
        return FrozenMapping(cast(Mapping[str, object], value))
    if isinstance(value, list | tuple):
        return FrozenList(cast(Sequence[object], value))
    return value


def frozen_view(value: Mapping[str, object]) -> Mapping[str, object]:
    """A read-only view of a call's arguments or envelope, at no copying cost."""
    return FrozenMapping(value)


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
