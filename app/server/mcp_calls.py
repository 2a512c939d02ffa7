"""MCP middleware around the memory tools: order, prompt block, approval, telemetry.

`MemoryCalls` wraps `tools/list` and `tools/call` on the wire: it lists the tools
in the documented order, appends the memory prompt as a second text block to a
successful index result, holds calls to tools in `require_approval` until the
client's user approves them (MCP elicitation), and reports each finished call
to the `on_call` observers.
"""

import json
import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
)
from mcp.types.methods import is_input_required
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError
from tenchi.mcp import TOOL_MCP_PROTOCOL_VERSION
from tenchi.tools import Tool

from app.server.telemetry import (
    ToolCallObserver,
    ToolCallRecord,
    frozen_copy,
    notify,
)

approved_tool: ContextVar[str | None] = ContextVar("approved_tool", default=None)
"""The tool the current call's user approved; read by the tenchi approve hook."""

APPROVAL_KEY = "wenchang_approval"
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Allow this memory change.",
        }
    },
    "required": ["approve"],
}
NO_APPROVER = (
    "This memory tool needs the user's approval for each call, and the user cannot "
    "be asked through this MCP connection (the client does not support "
    "elicitation, or the connection cannot carry the question). Tell the user the "
    "change was not made; an operator can drop the tool from "
    "WENCHANG_REQUIRE_APPROVAL."
)
DENIED = (
    "The user did not approve this call, so nothing was changed. Do not retry it "
    "unless the user asks you to."
)

Wire = dict[str, Any]


def failure(kind: str, message: str) -> Wire:
    """A tool result in tenchi's envelope shape, as it goes on the wire."""
    payload = {
        "schema_version": TOOL_MCP_PROTOCOL_VERSION,
        "ok": False,
        "error": {"kind": kind, "message": message},
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    result = CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=payload,
        is_error=True,
    )
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether a call may run; `result` answers the call instead when set."""

    approved: bool = False
    result: HandlerResult = None


class ApprovalGate:
    """Asks the client's user before each call of a tool that requires approval."""

    def __init__(self, tools: Mapping[str, Tool[Any, Any]], required: frozenset[str]):
        self._inputs = {
            name: TypeAdapter[Any](tools[name].request or dict[str, Any])
            for name in required
        }
        self._required = required

    async def decide(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        arguments: Mapping[str, Any],
    ) -> Decision:
        if name not in self._required or not self._valid(name, arguments):
            # Invalid input is tenchi's to reject, before any question is asked.
            return Decision()
        session = ctx.session
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return Decision(result=failure("approval_required", NO_APPROVER))
        question = _question(name, arguments)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return _round_trip(ctx, question)
        if not session.can_send_request:
            return Decision(result=failure("approval_required", NO_APPROVER))
        answer = await session.elicit_form(
            question, APPROVAL_SCHEMA, related_request_id=ctx.request_id
        )
        return _verdict(answer)

    def _valid(self, name: str, arguments: Mapping[str, Any]) -> bool:
        try:
            self._inputs[name].validate_python(dict(arguments))
        except ValidationError:
            return False
        return True


def _question(name: str, arguments: Mapping[str, Any]) -> str:
    where = ", ".join(
        f"{key} {arguments[key]}"
        for key in ("scope", "area", "name")
        if isinstance(arguments.get(key), str)
    )
    return f"Allow the agent to call {name} on the memory file at {where}?"


def _round_trip(ctx: ServerRequestContext[Any, Any], question: str) -> Decision:
    # The SDK seals requestState and binds it to this tool and these exact
    # arguments, so an answer counts only for the call it was asked about.
    params: Mapping[str, Any] = ctx.params or {}
    responses = params.get("inputResponses")
    if params.get("requestState") == APPROVAL_KEY and isinstance(responses, dict):
        answer = cast(dict[str, Any], responses).get(APPROVAL_KEY)
        if answer is not None:
            return _verdict(ElicitResult.model_validate(answer))
    request = ElicitRequest(
        params=ElicitRequestFormParams(
            message=question, requested_schema=APPROVAL_SCHEMA
        )
    )
    return Decision(
        result=InputRequiredResult(
            input_requests={APPROVAL_KEY: request}, request_state=APPROVAL_KEY
        )
    )


def _verdict(answer: ElicitResult) -> Decision:
    content = answer.content or {}
    if answer.action == "accept" and content.get("approve") is True:
        return Decision(approved=True)
    return Decision(result=failure("approval_denied", DENIED))


@dataclass(frozen=True, slots=True)
class MemoryCalls:
    """The middleware; tenchi's own request-capture middleware runs outside it."""

    order: tuple[str, ...]
    index_tool: str
    prompt: str
    gate: ApprovalGate
    observers: tuple[ToolCallObserver, ...]

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/list":
            return self._in_order(await call_next(ctx))
        if ctx.method == "tools/call":
            return await self._call(ctx, call_next)
        return await call_next(ctx)

    def _in_order(self, result: HandlerResult) -> HandlerResult:
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return result
        rank = {name: position for position, name in enumerate(self.order)}
        listed = cast(list[dict[str, Any]], result["tools"])
        ordered = sorted(
            listed, key=lambda item: rank.get(str(item.get("name")), len(rank))
        )
        return {**result, "tools": ordered}

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        started = time.perf_counter()
        params: Mapping[str, Any] = ctx.params or {}
        name = str(params.get("name", ""))
        raw_arguments = params.get("arguments")
        arguments: dict[str, Any] = (
            cast(dict[str, Any], raw_arguments)
            if isinstance(raw_arguments, dict)
            else {}
        )
        try:
            result = await self._decided(ctx, call_next, name, arguments)
        except MCPError as exc:
            error = {"kind": "protocol_error", "message": exc.error.message}
            self._record(ctx, name, arguments, {"error": error}, True, started)
            raise
        if is_input_required(result):
            return result
        if isinstance(result, dict):
            wire: Wire = result
            if name == self.index_tool and _succeeded(wire):
                wire = self._with_prompt(wire)
            self._record(ctx, name, arguments, _payload(wire), _is_error(wire), started)
            return wire
        return result

    async def _decided(
        self,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
        name: str,
        arguments: Mapping[str, Any],
    ) -> HandlerResult:
        decision = await self.gate.decide(ctx, name, arguments)
        if decision.result is not None:
            return decision.result
        token = approved_tool.set(name if decision.approved else None)
        try:
            return await call_next(ctx)
        finally:
            approved_tool.reset(token)

    def _with_prompt(self, wire: Wire) -> Wire:
        content = cast(list[Any], wire.get("content") or [])
        return {**wire, "content": [*content, {"type": "text", "text": self.prompt}]}

    def _record(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        arguments: Mapping[str, Any],
        result: Mapping[str, Any],
        is_error: bool,
        started: float,
    ) -> None:
        if not self.observers:
            return
        record = ToolCallRecord(
            tool=name,
            arguments=frozen_copy(arguments),
            result=frozen_copy(result),
            is_error=is_error,
            request_id=str(ctx.request_id),
            duration_s=time.perf_counter() - started,
        )
        notify(self.observers, record)


def _is_error(wire: Wire) -> bool:
    return wire.get("isError") is True


def _succeeded(wire: Wire) -> bool:
    structured = wire.get("structuredContent")
    return (
        not _is_error(wire)
        and isinstance(structured, dict)
        and bool(cast(dict[str, Any], structured).get("ok"))
    )


def _payload(wire: Wire) -> Mapping[str, Any]:
    """What the observer sees as the result: the envelope, else the text blocks."""
    structured = wire.get("structuredContent")
    if isinstance(structured, dict):
        return cast(dict[str, Any], structured)
    content = cast(list[Any], wire.get("content") or [])
    blocks = [
        cast(dict[str, Any], block) for block in content if isinstance(block, dict)
    ]
    return {"content": [block.get("text") for block in blocks]}
