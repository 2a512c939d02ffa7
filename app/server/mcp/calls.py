"""MCP middleware around the memory tools: order, prompt block, approval, telemetry.

`MemoryCalls` wraps `tools/list` and `tools/call` on the wire: it lists the tools
in the documented order, appends the memory prompt as a second text block to a
successful index result, lets the approval gate hold calls to tools in
`require_approval`, reports each finished call to the `on_call` observers, and
each failed one to `on_refusal` (the audit of calls refused before they ran).
"""

import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import cast
from uuid import uuid4

from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.types.methods import is_input_required

from app.server.declarations import McpRequestContext
from app.server.http.request_log import current_request_id
from app.server.mcp.approval_gate import ApprovalGate, Wire, approved_tool
from app.server.mcp.envelope import with_request_id
from app.server.mcp.telemetry import (
    ToolCallObserver,
    ToolCallRecord,
    frozen_view,
    notify,
)

RefusalHook = Callable[[str, Mapping[str, object], Wire], Awaitable[None]]
"""Told of every failed tool result: (tool, arguments, result wire), in the call."""

call_request_id: ContextVar[str] = ContextVar("wenchang_mcp_request_id", default="")
"""The current tool call's request id: the HTTP request's, else a fresh one."""


def call_arguments(params: Mapping[str, object]) -> dict[str, object]:
    """A `tools/call`'s `arguments` as a record takes them: {} unless an object.

    Records (telemetry here, the refusal audit) take every call as it was sent;
    `fast.mcp_direct.DirectCalls.plain` is strict instead and answers only calls
    whose `name` is a served tool and whose `arguments` are an object.
    """
    arguments = params.get("arguments")
    return cast(dict[str, object], arguments) if isinstance(arguments, dict) else {}


@dataclass(frozen=True, slots=True)
class MemoryCalls:
    """The middleware; tenchi's own request-capture middleware runs outside it."""

    order: tuple[str, ...]
    index_tool: str
    prompt: str
    gate: ApprovalGate
    observers: tuple[ToolCallObserver, ...]
    on_refusal: RefusalHook | None = None

    async def __call__(
        self, ctx: McpRequestContext, call_next: CallNext
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
        listed = cast(list[dict[str, object]], result["tools"])
        ordered = sorted(
            listed, key=lambda item: rank.get(str(item.get("name")), len(rank))
        )
        return {**result, "tools": ordered}

    async def _call(self, ctx: McpRequestContext, call_next: CallNext) -> HandlerResult:
        request_id = current_request_id.get() or uuid4().hex
        token = call_request_id.set(request_id)
        try:
            return await self._identified_call(ctx, call_next, request_id)
        finally:
            call_request_id.reset(token)

    async def _identified_call(
        self, ctx: McpRequestContext, call_next: CallNext, request_id: str
    ) -> HandlerResult:
        started = time.perf_counter()
        params: Mapping[str, object] = ctx.params or {}
        name, arguments = str(params.get("name", "")), call_arguments(params)
        try:
            result = await self._decided(ctx, call_next, name, arguments)
        except MCPError as exc:
            error = {"kind": "protocol_error", "message": exc.error.message}
            self._record(request_id, name, arguments, {"error": error}, True, started)
            raise
        if is_input_required(result) or not isinstance(result, dict):
            return result
        return await self._finished(request_id, name, arguments, result, started)

    async def direct(
        self,
        name: str,
        arguments: Mapping[str, object],
        run: Callable[[], Awaitable[Wire]],
    ) -> Wire:
        """A call `fast.mcp_direct` runs itself (no approval to ask), finished as
        `__call__` finishes a call of the SDK's kernel."""
        request_id = current_request_id.get() or uuid4().hex
        token = call_request_id.set(request_id)
        try:
            started = time.perf_counter()
            wire = await run()
            return await self._finished(request_id, name, arguments, wire, started)
        finally:
            call_request_id.reset(token)

    async def _finished(
        self,
        request_id: str,
        name: str,
        arguments: Mapping[str, object],
        wire: Wire,
        started: float,
    ) -> Wire:
        if _is_error(wire):
            wire = with_request_id(wire, request_id)
            if self.on_refusal is not None:
                await self.on_refusal(name, arguments, wire)
        elif name == self.index_tool and _succeeded(wire):
            wire = self._with_prompt(wire)
        self._record(
            request_id, name, arguments, _payload(wire), _is_error(wire), started
        )
        return wire

    async def _decided(
        self,
        ctx: McpRequestContext,
        call_next: CallNext,
        name: str,
        arguments: Mapping[str, object],
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
        content = cast(list[object], wire.get("content") or [])
        return {**wire, "content": [*content, {"type": "text", "text": self.prompt}]}

    def _record(
        self,
        request_id: str,
        name: str,
        arguments: Mapping[str, object],
        result: Mapping[str, object],
        is_error: bool,
        started: float,
    ) -> None:
        if not self.observers:
            return
        record = ToolCallRecord(
            tool=name,
            arguments=frozen_view(arguments),
            result=frozen_view(result),
            is_error=is_error,
            request_id=request_id,
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
        and bool(cast(dict[str, object], structured).get("ok"))
    )


def _payload(wire: Wire) -> Mapping[str, object]:
    """What the observer sees as the result: the envelope, else the text blocks."""
    structured = wire.get("structuredContent")
    if isinstance(structured, dict):
        return cast(dict[str, object], structured)
    content = cast(list[object], wire.get("content") or [])
    blocks = [
        cast(dict[str, object], block) for block in content if isinstance(block, dict)
    ]
    return {"content": [block.get("text") for block in blocks]}
