"""MCP tool calls refused before their operation ran, recorded as audit events.

Tenchi's tool layer answers a call whose arguments fail the tool's input schema
with `invalid_input` before the tool's use case runs, so the audit wrapper never
sees it. `McpRefusalAudit` records each as one refused call of the tool's
operation, with the outcome HTTP gives the same refusal (`VALIDATION_ERROR`),
attributed to the caller, at the location its arguments name.
"""

from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any, cast

from tenchi.tools import ToolBinding

from app.features.audit.domain import Outcome
from app.server.auditing import audited_operation, record_call
from app.server.context import AppContext
from app.shared.identity import Identity

INVALID_INPUT = "invalid_input"
OUTCOME = "VALIDATION_ERROR"
LOCATION = ("scope", "area", "name")

caller: ContextVar[Identity | None] = ContextVar("wenchang_mcp_caller", default=None)
"""The identity the current tool call authenticated as (set before validation).

The call's context (`mcp._call_context`) is built from it, for the tool's use
case and for a refusal recorded here alike."""


def failure_kind(wire: Mapping[str, Any]) -> str | None:
    """The `error.kind` of a failed tool result (wire form), if it names one."""
    structured = wire.get("structuredContent")
    if not isinstance(structured, dict):
        return None
    error = cast(dict[str, Any], structured).get("error")
    if not isinstance(error, dict):
        return None
    kind = cast(dict[str, Any], error).get("kind")
    return kind if isinstance(kind, str) else None


class McpRefusalAudit:
    """Records the `invalid_input` answers of the served tools in the app's log."""

    def __init__(
        self,
        tools: Iterable[ToolBinding[Any, Any]],
        call_context: Callable[[], AppContext],
    ) -> None:
        self._operations = {
            binding.tool.name: operation
            for binding in tools
            if (operation := audited_operation(binding.use_case)) is not None
        }
        self._call_context = call_context

    async def __call__(
        self, tool: str, arguments: Mapping[str, Any], wire: Mapping[str, Any]
    ) -> None:
        operation = self._operations.get(tool)
        if (
            failure_kind(wire) != INVALID_INPUT
            or operation is None
            or caller.get() is None
        ):
            return
        fields = {
            key: value
            for key in LOCATION
            if isinstance(value := arguments.get(key), str)
        }
        await record_call(
            self._call_context(), operation, fields, Outcome(OUTCOME), durable=False
        )
