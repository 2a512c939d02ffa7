"""The approval gate: a call of a tool in ``require_approval`` waits for the
user's yes, asked through the MCP client (elicitation), and nothing else does."""

import json
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from mcp.server.context import HandlerResult
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError
from tenchi.mcp import TOOL_MCP_PROTOCOL_VERSION

from app.server.declarations import AnyTool, McpRequestContext
from app.shared.identity import Identity

approved_tool: ContextVar[str | None] = ContextVar("approved_tool", default=None)
"""The tool the current call's user approved; read by the tenchi approve hook."""

APPROVAL_KEY = "wenchang_approval"
APPROVAL_SCHEMA: dict[str, object] = {
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

Wire = dict[str, object]


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

    def __init__(self, tools: Mapping[str, AnyTool], required: frozenset[str]):
        self._inputs = {
            name: TypeAdapter[Any](tools[name].request or dict[str, object])
            for name in required
        }
        self._required = required

    async def decide(
        self,
        ctx: McpRequestContext,
        name: str,
        arguments: Mapping[str, object],
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

    def _valid(self, name: str, arguments: Mapping[str, object]) -> bool:
        try:
            self._inputs[name].validate_python(dict(arguments))
        except ValidationError:
            return False
        return True


def _question(name: str, arguments: Mapping[str, object]) -> str:
    where = ", ".join(
        f"{key} {arguments[key]}"
        for key in ("scope", "area", "name")
        if isinstance(arguments.get(key), str)
    )
    return f"Allow the agent to call {name} on the memory file at {where}?"


def _round_trip(ctx: McpRequestContext, question: str) -> Decision:
    # The SDK seals requestState and binds it to this tool and these exact
    # arguments, so an answer counts only for the call it was asked about.
    params: Mapping[str, object] = ctx.params or {}
    responses = params.get("inputResponses")
    if params.get("requestState") == APPROVAL_KEY and isinstance(responses, dict):
        answer = cast(dict[str, object], responses).get(APPROVAL_KEY)
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


def approve_listed(
    required: frozenset[str],
) -> Callable[[Identity, AnyTool, object], bool]:
    def approve(identity: Identity, declaration: AnyTool, _: object) -> bool:
        # Writes are routine and version-guarded; only listed tools need the
        # client's approval, which the approval gate records for this call.
        del identity
        name = declaration.name
        return name not in required or approved_tool.get() == name

    return approve
