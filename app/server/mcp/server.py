"""Tool-MCP for Wenchang: builds the server of the memory tools, prompt and resource.

`create_memory_mcp_server` serves `mcp_tools.served_tools` through `tenchi.mcp`.
Every call runs on the process's shared `AppContext` (storage is opened once, by
the caller), with the caller's identity and the `mcp` surface. `mcp_calls` adds
what tenchi does not do itself: tool order, the prompt block on the index, the
approval gate (`approval_gate`), and per-call telemetry.
"""

import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from tenchi.mcp import McpRequest, create_tool_mcp_server
from tenchi.tools import ToolGroup, ToolRunner, create_tool_runner

from app.features.memory.tools import get_memory_index_tool
from app.infra.tokens.token_file_resolver import FixedResolver
from app.server.context import AppContext
from app.server.fast import fast_paths_on
from app.server.fast.mcp_direct import DirectCalls
from app.server.mcp.approval_gate import ApprovalGate, approve_listed
from app.server.mcp.callers import SURFACE, Callers
from app.server.mcp.calls import MemoryCalls, call_request_id
from app.server.mcp.prompt import build_memory_prompt
from app.server.mcp.refusal_audit import McpRefusalAudit, caller
from app.server.mcp.resources import ListedFiles, add_file_resources, last_modified
from app.server.mcp.server_info import SERVER_NAME, ServerInfo, wenchang_version
from app.server.mcp.session_subscriptions import SessionSubscriptions
from app.server.mcp.settings import prompt_slots, registered_name, required_approvals
from app.server.mcp.state_key import share_request_state_key
from app.server.mcp.subscriptions import FileSubscriptions
from app.server.mcp.telemetry import ToolCallObserver, log_tool_call
from app.server.mcp.tools import direct_results, served_tools
from app.server.runtime import Runtime, create_lifespan
from app.server.settings import Settings, SettingsError
from app.shared.identity import Identity, Resolver

PROMPT_RESOURCE_URI = "wenchang://memory-prompt"

Authenticate = Callable[[McpRequest], Identity]


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection from the allow-lists; `host:*` also allows `host`."""
    hosts = list(settings.allowed_hosts)
    hosts += [host[:-2] for host in settings.allowed_hosts if host.endswith(":*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=list(settings.allowed_origins),
    )


def _call_context(context: Callable[[], AppContext]) -> Callable[[], AppContext]:
    """The current tool call's context: its caller, the `mcp` surface, its request."""

    def call_context() -> AppContext:
        identity = caller.get()
        if identity is None:
            raise RuntimeError("an MCP call's context was asked for outside a call")
        return context().for_call(
            identity, surface=SURFACE, request_id=call_request_id.get()
        )

    return call_context


def _runner_factory(
    tools: ToolGroup, call_context: Callable[[], AppContext]
) -> Callable[[Identity], ToolRunner]:
    # One runner for the process (building one inspects signatures: ~50 us a
    # call); the caller's identity reaches it through this call's context. No
    # lifespan: the runner would enter it on every call, and storage is already
    # open for the life of the process.
    shared = create_tool_runner(tools=tools, context_factory=call_context)

    def runner(identity: Identity) -> ToolRunner:
        caller.set(identity)
        return shared

    return runner


def _keep_logging_plain() -> None:
    # Building the SDK's server calls logging.basicConfig with a Rich handler, which
    # lays out every line: ~0.8 ms per tool call, more than the call itself
    # (bench/RESULTS.md). basicConfig does nothing once the root logger has a
    # handler, so give it a plain one first: the same lines, on stderr, at INFO.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The SDK says "Terminating session: None" at INFO after every stateless
    # request: a line per call that names nothing.
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)


@dataclass(frozen=True, slots=True)
class MemoryMcp:
    """The MCP server, the fast path of its plain tool calls (`fast.mcp_direct`,
    None with the fast paths off) and the audit of its tools' calls refused
    before they ran."""

    server: MCPServer[dict[str, object]]
    direct: DirectCalls | None
    refusals: McpRefusalAudit


def create_memory_mcp_server(
    settings: Settings,
    *,
    authenticate: Authenticate,
    context: Callable[[], AppContext],
    on_call: Sequence[ToolCallObserver] = (log_tool_call,),
) -> MCPServer[dict[str, object]]:
    """The MCP server; fails with SettingsError when the settings cannot serve."""
    return build_memory_mcp(
        settings, authenticate=authenticate, context=context, on_call=on_call
    ).server


def build_memory_mcp(
    settings: Settings,
    *,
    authenticate: Authenticate,
    context: Callable[[], AppContext],
    on_call: Sequence[ToolCallObserver] = (log_tool_call,),
) -> MemoryMcp:
    """The MCP server and its direct path; SettingsError if settings cannot serve."""
    _keep_logging_plain()
    slots = prompt_slots(settings)
    prompt = build_memory_prompt(slots)
    tools = served_tools(settings, purpose=slots.purpose)
    call_context = _call_context(context)
    required = required_approvals(settings)
    server = create_tool_mcp_server(
        tools=tools,
        authenticate=_remembering(authenticate),
        runner_factory=_runner_factory(tools, call_context),
        approve=approve_listed(required),
        name=SERVER_NAME,
        instructions=prompt,
        transport_security=transport_security(settings),
    )
    share_request_state_key(server, settings)
    server.resource(
        PROMPT_RESOURCE_URI,
        name="memory_prompt",
        title="Memory prompt",
        description="How to use memory; the same text as the server instructions.",
        mime_type="text/markdown",
    )(lambda: prompt)
    callers = Callers(authenticate, context)
    add_file_resources(server, callers=callers)
    refusals = McpRefusalAudit(tools)
    calls = MemoryCalls(
        order=tuple(binding.tool.name for binding in tools),
        index_tool=registered_name(settings, get_memory_index_tool.name),
        prompt=prompt,
        gate=ApprovalGate(
            {binding.tool.name: binding.tool for binding in tools}, required
        ),
        observers=tuple(on_call),
        on_refusal=refusals.invalid_input(call_context),
    )
    server.middleware.append(ServerInfo(version=wenchang_version()))
    server.middleware.append(calls)
    server.middleware.append(last_modified)
    server.middleware.append(ListedFiles(callers))
    server.middleware.append(FileSubscriptions(callers))
    if not fast_paths_on(settings):
        return MemoryMcp(server, None, refusals)
    direct = DirectCalls(
        tools,
        authenticate=authenticate,
        call_context=call_context,
        calls=calls,
        required=required,
        results=direct_results(settings, tools),
    )
    return MemoryMcp(server, direct, refusals)


def _remembering(authenticate: Authenticate) -> Authenticate:
    """``authenticate``, keeping the identity for a call refused before it runs."""

    def remembered(request: McpRequest) -> Identity:
        identity = authenticate(request)
        caller.set(identity)
        return identity

    return remembered


class SharedContext:
    """The process's AppContext while its lifespan runs; every MCP call borrows it."""

    def __init__(self) -> None:
        self._context: AppContext | None = None

    def __call__(self) -> AppContext:
        if self._context is None:
            raise RuntimeError("Wenchang is not running: its lifespan has not started")
        return self._context

    @asynccontextmanager
    async def open(
        self, lifespan: Callable[[], AbstractAsyncContextManager[Runtime]]
    ) -> AsyncGenerator[Runtime]:
        async with lifespan() as runtime:
            self._context = runtime.context
            try:
                yield runtime
            finally:
                self._context = None


def fixed_identity(resolver: Resolver) -> Authenticate:
    """Authentication for a local process: the resolver's one identity, always."""
    resolved = resolver.resolve("")
    if not isinstance(resolved, Identity):
        raise SettingsError(f"The local identity does not resolve: {resolved.detail}")
    return lambda _: resolved


async def serve_stdio(
    settings: Settings, *, on_call: Sequence[ToolCallObserver] = (log_tool_call,)
) -> None:
    """Serve the tools over stdio as WENCHANG_LOCAL_IDENTITY until stdin closes."""
    shared = SharedContext()
    resolver = FixedResolver(Identity(grants=settings.local_grants))
    authenticate = fixed_identity(resolver)
    server = create_memory_mcp_server(
        settings, authenticate=authenticate, context=shared, on_call=on_call
    )
    # stdio is one session for the life of the process: it can hold subscriptions.
    subscriptions = SessionSubscriptions(Callers(authenticate, shared))
    server.middleware.append(subscriptions)
    async with (
        shared.open(create_lifespan(settings, surface=SURFACE)),
        subscriptions.run(),
    ):
        await server.run_stdio_async()
