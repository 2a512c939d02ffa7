"""A stateless `tools/call` answered by a direct call of its tool: the SDK's answer.

For one tool call the SDK's kernel builds a request context, runs the server's
middleware chain, validates the params into its model, wraps Tenchi's result in
a `CallToolResult`, validates and dumps that again against the protocol
version's schema, and the exchange builds and dumps a JSON-RPC model: several
times the cost of reading a file. `DirectCalls` runs the same steps for a plain
call (a served tool, `name` and `arguments` only, no approval to ask, no
global OpenTelemetry tracer to give a span to): Tenchi's input-schema verdict
(compiled, `mcp_input_check`) and request parsing, the tool's use case on the
call's context, Tenchi's result envelope, and our `MemoryCalls` finish
(request id, audit of refusals, telemetry). Anything else (an unknown tool,
one that needs approval, `_meta`, a caller that no longer authenticates)
returns None and goes the SDK's way.
`tests/test_mcp_direct.py` holds every answer of this path equal to the SDK's.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from jsonschema.exceptions import ValidationError as JsonSchemaValidationError
from jsonschema.protocols import Validator
from opentelemetry import trace
from pydantic import ValidationError
from tenchi.errors import AppError
from tenchi.mcp import (
    TOOL_MCP_PROTOCOL_VERSION,
    McpRequest,
    _approval_input,  # pyright: ignore[reportPrivateUsage]
    _failure,  # pyright: ignore[reportPrivateUsage]
    _jsonable_details,  # pyright: ignore[reportPrivateUsage]
)
from tenchi.tools import (
    ToolResultError,
    _tool_kwargs,  # pyright: ignore[reportPrivateUsage]
    _ToolResultValidationError,  # pyright: ignore[reportPrivateUsage]
)

from app.server.context import AppContext
from app.server.declarations import AnyTool, AnyToolBinding
from app.server.mcp_calls import MemoryCalls, Wire
from app.server.mcp_index import DirectAnswer, DirectResult
from app.server.mcp_input_check import Check, compiled
from app.server.mcp_refusal_audit import caller
from app.shared.identity import Identity

Authenticate = Callable[[McpRequest], Identity]
PLAIN_PARAMS = frozenset({"name", "arguments"})
INVALID_INPUT = "Input does not match the tool schema."
FAILED = "The tool invocation failed."
INVALID_RESULT = "The tool returned an invalid result."


@dataclass(frozen=True, slots=True)
class _Tool:
    """One served tool as Tenchi's MCP server checks and calls it."""

    binding: AnyToolBinding
    validator: Validator
    direct_input: bool
    check: Check | None
    """The input schema's verdict without jsonschema (`mcp_input_check`)."""

    def valid(self, arguments: dict[str, Any]) -> bool:
        if self.check is not None:
            return self.check(arguments)
        try:
            self.validator.validate(arguments)
        except JsonSchemaValidationError:
            return False
        return True


class DirectCalls:
    """Answers plain calls of the served tools without the SDK's kernel."""

    def __init__(
        self,
        server: object,
        *,
        authenticate: Authenticate,
        call_context: Callable[[], AppContext],
        calls: MemoryCalls,
        required: frozenset[str],
        results: Mapping[str, DirectResult] | None = None,
    ) -> None:
        self._authenticate = authenticate
        # Tools whose result is made without their model (`mcp_index`).
        self._results = results or {}
        self._call_context = call_context
        self._calls = calls
        # A destructive tool outside `required` is approved without a question
        # (`approval_gate.approve_listed`); the others need the SDK's gate.
        self._tools = {
            name: _Tool(
                entry.binding,
                entry.input_validator,
                entry.direct_input,
                compiled(entry.definition.input_schema),
            )
            for name, entry in _entries(server).items()
            if name not in required
        }

    def plain(self, params: object) -> tuple[str, dict[str, Any]] | None:
        """The tool and arguments of a call this path answers, else None.

        Strict where records are lenient (`mcp_calls.call_arguments`): any
        other field, a name that is no served tool, or arguments that are not
        an object leave the call to the SDK's path, which answers it as it does.
        """
        if not isinstance(params, dict):
            return None
        fields = cast(dict[str, Any], params)
        name = fields.get("name")
        arguments = fields.get("arguments", {})
        if (
            not fields.keys() <= PLAIN_PARAMS
            or not isinstance(name, str)
            or name not in self._tools
            or not isinstance(arguments, dict)
            or _traced()
        ):
            return None
        return name, cast(dict[str, Any], arguments)

    async def call(
        self, headers: Mapping[str, str], name: str, arguments: dict[str, Any]
    ) -> Wire | None:
        """The call's wire result; None when the caller does not authenticate."""
        try:
            identity = self._authenticate(McpRequest(request_id=None, headers=headers))
        except Exception:
            return None  # the SDK's path answers it, with its own message
        token = caller.set(identity)
        try:
            tool = self._tools[name]
            return await self._calls.direct(
                name, arguments, lambda: self._run(tool, arguments)
            )
        finally:
            caller.reset(token)

    async def _run(self, tool: _Tool, arguments: dict[str, Any]) -> Wire:
        if not tool.valid(arguments):
            return _wire(_failure("invalid_input", INVALID_INPUT))
        declaration = tool.binding.tool
        value: object = arguments if tool.direct_input else arguments["input"]
        try:
            kwargs = _tool_kwargs(declaration, input=value, input_json=None)
            if declaration.destructive:
                _approval_input(declaration, kwargs)  # Tenchi's check before approval
        except ValidationError:
            return _wire(_failure("invalid_input", INVALID_INPUT))
        except Exception:  # the SDK answers any other refusal as "failed" too
            return _wire(_failure("failed", FAILED))
        return await self._invoke(tool.binding, kwargs)

    async def _invoke(self, binding: AnyToolBinding, kwargs: dict[str, Any]) -> Wire:
        declaration = binding.tool
        direct = self._results.get(declaration.name)
        try:
            context = self._call_context()
            if direct is None:
                raw = await binding.use_case(**kwargs, context=context)
                answer = DirectAnswer(_serialized(declaration, raw), "")
            else:
                answer = await direct(context)
        except AppError as exc:
            if not declaration.declares_error(exc.definition):
                return _wire(_failure("failed", FAILED))
            details = _jsonable_details(exc.details)
            return _wire(
                _failure(
                    "application_error", exc.message, code=exc.code, details=details
                )
            )
        except ToolResultError:
            return _wire(_failure("invalid_result", INVALID_RESULT))
        except Exception:  # as the SDK's kernel: a tool's crash is a "failed" result
            return _wire(_failure("failed", FAILED))
        payload = {
            "schema_version": TOOL_MCP_PROTOCOL_VERSION,
            "ok": True,
            "result": answer.result,
        }
        if not answer.text:
            return _wire(payload)
        # `_wire`'s text, the result's own sorted: keys ok < result < schema_version.
        version = json.dumps(TOOL_MCP_PROTOCOL_VERSION)
        text = f'{{"ok":true,"result":{answer.text},"schema_version":{version}}}'
        return _wire(payload, text)


def _serialized(declaration: AnyTool, raw: object) -> object:
    """The result as Tenchi's runner serialises it, without its JSON round trip.

    Tenchi dumps the validated result in JSON mode, then passes the dump through
    `json.dumps` / `json.loads`: a JSON-mode dump holds only JSON values (NaN
    and infinities already dumped as null), which the round trip gives back
    unchanged, at ~10 ms for a 500-entry index.
    """
    adapter = declaration._result_adapter  # pyright: ignore[reportPrivateUsage]
    try:
        validated = adapter.validate_python(raw)
        return adapter.dump_python(
            validated, mode="json", by_alias=True, warnings="error"
        )
    except Exception as exc:  # re-raised as the invalid result the runner reports
        raise _ToolResultValidationError(declaration.name) from exc


def _wire(payload: dict[str, Any], text: str = "") -> Wire:
    """Tenchi's `CallToolResult` of `payload`, as the SDK puts it on the wire
    (`text`, when given, is the payload's as written here)."""
    text = text or json.dumps(payload, sort_keys=True, separators=(",", ":"))
    # In the order the SDK's per-version serializer emits them.
    return {
        "content": [{"text": text, "type": "text"}],
        "isError": payload["ok"] is False,
        "structuredContent": payload,
    }


def _traced() -> bool:
    """Whether a global tracer provider is set: the SDK's kernel spans each call."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def _entries(server: object) -> Mapping[str, Any]:
    entries = getattr(server, "_entries", None)
    if not isinstance(entries, dict):
        raise RuntimeError("Tenchi's MCP server has no _entries to call tools from")
    return cast(dict[str, Any], entries)
