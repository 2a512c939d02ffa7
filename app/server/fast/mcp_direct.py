"""A stateless `tools/call` answered by a direct call of its tool: the SDK's answer.

For one tool call the SDK's kernel builds a request context, runs the server's
middleware chain, validates the params into its model, wraps Tenchi's result in
a `CallToolResult`, validates and dumps that again against the protocol
version's schema, and the exchange builds and dumps a JSON-RPC model: several
times the cost of reading a file. `DirectCalls` runs the same steps for a plain
call (a served tool, `name` and `arguments` only, no approval to ask, no
global OpenTelemetry tracer to give a span to), from the tool's public
declaration: the verdict of its published input schema (compiled,
`mcp_input_check`), its request parsed by its declared type, the use case on
the call's context, its result dumped by its declared type into the envelope
Tenchi writes, and our `MemoryCalls` finish (request id, audit of refusals,
telemetry). Anything else (an unknown tool,
one that needs approval, `_meta`, a caller that no longer authenticates)
returns None and goes the SDK's way.
`tests/test_mcp_direct.py` holds every answer of this path equal to the declared
path's (the fast paths off).
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from opentelemetry import trace
from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python
from tenchi.errors import AppError
from tenchi.mcp import TOOL_MCP_PROTOCOL_VERSION, McpRequest
from tenchi.tools import ToolGroup, tool_manifest

from app.server.context import AppContext
from app.server.declarations import AnyToolBinding
from app.server.fast.mcp_index import DirectAnswer, DirectResult
from app.server.fast.mcp_input_check import Check, compiled
from app.server.mcp.calls import MemoryCalls, Wire
from app.server.mcp.refusal_audit import caller
from app.shared.identity import Identity

Authenticate = Callable[[McpRequest], Identity]
PLAIN_PARAMS = frozenset({"name", "arguments"})
INVALID_INPUT = "Input does not match the tool schema."
FAILED = "The tool invocation failed."
INVALID_RESULT = "The tool returned an invalid result."


class InvalidResult(Exception):
    """The tool's result does not validate as its declared result type."""


@dataclass(frozen=True, slots=True)
class _Tool:
    """One served tool as Tenchi's MCP server checks, parses and calls it.

    Built from the tool's public declaration: its manifest's input schema (an
    object schema, which Tenchi's server publishes as it is), and adapters of
    its declared request and result types.
    """

    binding: AnyToolBinding
    check: Check
    request: TypeAdapter[object] | None
    result: TypeAdapter[object]

    def kwargs(self, arguments: dict[str, object]) -> dict[str, object]:
        """The use case's keyword arguments (pydantic's ValidationError if none)."""
        if self.request is None:
            return {}
        request = self.request.validate_python(arguments)
        if self.binding.tool.destructive:
            # What Tenchi checks before it asks for approval: the request
            # dumps to JSON (a failure is a `failed` call).
            dumped = self.request.dump_python(
                request, mode="json", by_alias=True, warnings="error"
            )
            json.dumps(dumped, allow_nan=False)
        return {"request": request}

    def serialized(self, raw: object) -> object:
        """The result as Tenchi's runner serialises it (JSON mode, by alias)."""
        try:
            validated = self.result.validate_python(raw)
            return self.result.dump_python(
                validated, mode="json", by_alias=True, warnings="error"
            )
        except Exception as exc:  # any failure is the declared invalid_result
            raise InvalidResult(self.binding.tool.name) from exc


def _tool(binding: AnyToolBinding, check: Check) -> _Tool:
    declaration = binding.tool
    request = (
        None
        if declaration.request is None
        else TypeAdapter[object](declaration.request)
    )
    return _Tool(binding, check, request, TypeAdapter[object](declaration.result))


def _input_checks(tools: ToolGroup) -> dict[str, Check]:
    """Each tool's compiled input check, where Tenchi publishes the manifest's
    own input schema (an object schema) and it compiles; any other tool is left
    to the SDK's path."""
    checks: dict[str, Check] = {}
    for entry in tool_manifest(tools)["tools"]:
        schema = entry["input_schema"]
        check = compiled(schema) if schema.get("type") == "object" else None
        if check is not None:
            checks[entry["name"]] = check
    return checks


class DirectCalls:
    """Answers plain calls of the served tools without the SDK's kernel."""

    def __init__(
        self,
        tools: ToolGroup,
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
        checks = _input_checks(tools)
        self._tools = {
            binding.tool.name: _tool(binding, checks[binding.tool.name])
            for binding in tools
            if binding.tool.name not in required and binding.tool.name in checks
        }

    def plain(self, params: object) -> tuple[str, dict[str, object]] | None:
        """The tool and arguments of a call this path answers, else None.

        Strict where records are lenient (`mcp_calls.call_arguments`): any
        other field, a name that is no served tool, or arguments that are not
        an object leave the call to the SDK's path, which answers it as it does.
        """
        if not isinstance(params, dict):
            return None
        fields = cast(dict[str, object], params)
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
        return name, cast(dict[str, object], arguments)

    async def call(
        self, headers: Mapping[str, str], name: str, arguments: dict[str, object]
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

    async def _run(self, tool: _Tool, arguments: dict[str, object]) -> Wire:
        if not tool.check(arguments):
            return _wire(failure("invalid_input", INVALID_INPUT))
        try:
            kwargs = tool.kwargs(arguments)
        except ValidationError:
            return _wire(failure("invalid_input", INVALID_INPUT))
        except Exception:  # Tenchi answers any other parsing failure `failed`
            return _wire(failure("failed", FAILED))
        return await self._invoke(tool, kwargs)

    async def _invoke(self, tool: _Tool, kwargs: dict[str, object]) -> Wire:
        binding = tool.binding
        declaration = binding.tool
        direct = self._results.get(declaration.name)
        try:
            context = self._call_context()
            if direct is None:
                raw = await binding.use_case(**kwargs, context=context)
                answer = DirectAnswer(tool.serialized(raw), "")
            else:
                answer = await direct(context, kwargs)
        except AppError as exc:
            if not declaration.declares_error(exc.definition):
                return _wire(failure("failed", FAILED))
            details = jsonable_details(exc.details)
            return _wire(
                failure(
                    "application_error", exc.message, code=exc.code, details=details
                )
            )
        except InvalidResult:
            return _wire(failure("invalid_result", INVALID_RESULT))
        except Exception:  # as Tenchi's server: any other failure is `failed`
            return _wire(failure("failed", FAILED))
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


def failure(
    kind: str, message: str, *, code: str | None = None, details: object = None
) -> Wire:
    """A failed call's envelope, as Tenchi's MCP server writes it (the wire
    format ``tools/list`` publishes; ``tests/test_mcp_direct.py`` compares)."""
    error: dict[str, object] = {"kind": kind, "message": message}
    if code is not None:
        error["code"] = code
    if details is not None:
        error["details"] = details
    return {"schema_version": TOOL_MCP_PROTOCOL_VERSION, "ok": False, "error": error}


def jsonable_details(value: object) -> object:
    """An error's details as JSON values, or None when they have none."""
    if value is None:
        return None
    try:
        converted = to_jsonable_python(value, fallback=str)
        json.dumps(converted, allow_nan=False)
    except Exception:  # details that cannot be JSON are left out, as Tenchi does
        return None
    return converted


def _wire(payload: Wire, text: str = "") -> Wire:
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
