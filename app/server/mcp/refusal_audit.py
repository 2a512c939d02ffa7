"""MCP tool calls refused before their operation ran, recorded as audit events.

Tenchi's tool layer answers a call whose arguments fail the tool's input schema
with `invalid_input` before the tool's use case runs, and the bearer guard of
`/mcp` answers a spent rate limit (429) before the message reaches the tools:
the audit wrapper sees neither. `McpRefusalAudit` records each as one refused
call of the tool's operation, with the outcome HTTP gives the same refusal
(`VALIDATION_ERROR`, `RATE_LIMITED`), attributed to the caller, at the location
its arguments name.
"""

import json
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import cast

from app.features.audit.domain import Outcome
from app.server.auditing import audited_operation, record_call
from app.server.context import AppContext
from app.server.declarations import AnyToolBinding
from app.server.mcp.calls import RefusalHook, call_arguments
from app.shared.identity import Identity

INVALID_INPUT = "invalid_input"
OUTCOME = "VALIDATION_ERROR"
LOCATION = ("scope", "area", "name")

caller: ContextVar[Identity | None] = ContextVar("wenchang_mcp_caller", default=None)
"""The identity the current tool call authenticated as (set before validation).

Each call's context is built from it by our own
`app.server.mcp.server._call_context`, for the tool's use case and for a
refusal recorded here alike."""


def failure_kind(wire: Mapping[str, object]) -> str | None:
    """The `error.kind` of a failed tool result (wire form), if it names one."""
    structured = wire.get("structuredContent")
    if not isinstance(structured, dict):
        return None
    error = cast(dict[str, object], structured).get("error")
    if not isinstance(error, dict):
        return None
    kind = cast(dict[str, object], error).get("kind")
    return kind if isinstance(kind, str) else None


def tool_calls(body: bytes) -> list[tuple[str, Mapping[str, object]]]:
    """The (tool, arguments) of each `tools/call` request in a JSON-RPC body.

    A call whose `name` is not a string names no tool and is skipped."""
    try:
        parsed: object = json.loads(body)
    except ValueError:
        return []
    messages = cast(list[object], parsed) if isinstance(parsed, list) else [parsed]
    calls: list[tuple[str, Mapping[str, object]]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        request = cast(dict[str, object], message)
        params = request.get("params")
        if request.get("method") != "tools/call" or not isinstance(params, dict):
            continue
        named = cast(dict[str, object], params)
        if isinstance(tool := named.get("name"), str):
            calls.append((tool, call_arguments(named)))
    return calls


def _loggable(value: object) -> bool:
    """A string UTF-8 can carry: a JSON ``\\ud800`` decodes to a lone surrogate,
    which no store can write, and an unwritable event would stall the log."""
    if not isinstance(value, str):
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


class McpRefusalAudit:
    """Records the served tools' calls refused before they ran in the app's log."""

    def __init__(self, tools: Iterable[AnyToolBinding]) -> None:
        self._operations = {
            binding.tool.name: operation
            for binding in tools
            if (operation := audited_operation(binding.use_case)) is not None
        }

    async def record(
        self,
        context: AppContext,
        tool: str,
        arguments: Mapping[str, object],
        outcome: str,
    ) -> None:
        """One refused call of ``tool`` (nothing for a tool that records none)."""
        operation = self._operations.get(tool)
        if operation is None:
            return
        fields = {
            key: value for key in LOCATION if _loggable(value := arguments.get(key))
        }
        await record_call(context, operation, fields, Outcome(outcome), durable=False)

    def invalid_input(self, call_context: Callable[[], AppContext]) -> RefusalHook:
        """The tool runner's hook: records each `invalid_input` answer of a call."""

        async def refused(
            tool: str, arguments: Mapping[str, object], wire: Mapping[str, object]
        ) -> None:
            if failure_kind(wire) == INVALID_INPUT and caller.get() is not None:
                await self.record(call_context(), tool, arguments, OUTCOME)

        return refused
