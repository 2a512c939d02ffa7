"""Tool-MCP for Wenchang: the seven memory tools, the memory prompt and its resource.

`create_memory_mcp_server` serves the feature's tools through `tenchi.mcp`,
renamed with `tool_prefix` and described for the configured product and purpose.
Every call runs on the process's shared `AppContext` (storage is opened once, by
the caller), with the caller's identity and the `mcp` surface. `mcp_calls` adds
what tenchi does not do itself: tool order, the prompt block on the index, the
approval gate, and per-call telemetry.
"""

import functools
import logging
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from tenchi.errors import AppError
from tenchi.mcp import McpRequest, create_tool_mcp_server
from tenchi.tools import (
    Tool,
    ToolBinding,
    ToolGroup,
    ToolRunner,
    create_tool_runner,
    tool,
    tool_group,
    tool_handler,
)

from app.features.memory.tools import get_memory_index_tool
from app.features.memory.tools import tools as memory_tools
from app.infra.token_file import FixedResolver
from app.server.auditing import audited_use_case
from app.server.context import AppContext
from app.server.mcp_calls import ApprovalGate, MemoryCalls, approved_tool
from app.server.prompt import (
    DEFAULT_PURPOSE,
    DEFAULT_SCOPE_GUIDANCE,
    DEFAULT_SEED_AREAS,
    PromptSlots,
    build_memory_prompt,
)
from app.server.runtime import Runtime, create_lifespan
from app.server.settings import Settings, SettingsError
from app.server.telemetry import ToolCallObserver, log_tool_call
from app.shared.identity import Identity, Resolver

PROMPT_RESOURCE_URI = "wenchang://memory-prompt"
MAX_TOOL_DESCRIPTION_CHARS = 2000
SURFACE = "mcp"
_PRODUCT_SLOT = re.compile(r"\bmemory\b")
logger = logging.getLogger("wenchang.mcp")

Authenticate = Callable[[McpRequest], Identity]


def prompt_slots(settings: Settings) -> PromptSlots:
    return PromptSlots(
        purpose=settings.prompt_purpose or DEFAULT_PURPOSE,
        scope_guidance=settings.prompt_scope_guidance or DEFAULT_SCOPE_GUIDANCE,
        seed_areas=settings.prompt_seed_areas or DEFAULT_SEED_AREAS,
        systems_of_record=settings.prompt_systems_of_record,
    )


def registered_name(settings: Settings, name: str) -> str:
    return f"{settings.tool_prefix}_{name}" if settings.tool_prefix else name


def describe(declaration: Tool[Any, Any], *, product: str | None, purpose: str) -> str:
    """The tool's description as agents see it: product named, purpose first."""
    text = declaration.description
    if product:
        first, newline, rest = text.partition("\n")
        named = f"{product.strip()} memory"
        first = _PRODUCT_SLOT.sub(lambda _: named, first, count=1)
        text = first + newline + rest
    if declaration.name == get_memory_index_tool.name:
        text = f"{purpose.strip()}\n\n{text}"
    return text


def _served(
    binding: ToolBinding[Any, Any], settings: Settings, purpose: str
) -> ToolBinding[Any, Any]:
    declared = binding.tool
    name = registered_name(settings, declared.name)
    description = describe(declared, product=settings.product, purpose=purpose)
    if len(description) > MAX_TOOL_DESCRIPTION_CHARS:
        raise SettingsError(
            f"The MCP description of tool {name} is {len(description)} characters; "
            f"the limit is {MAX_TOOL_DESCRIPTION_CHARS}. Shorten WENCHANG_PRODUCT "
            "or WENCHANG_PROMPT_PURPOSE."
        )
    served = tool(
        name,
        request=declared.request,
        result=declared.result,
        description=description,
        errors=declared.errors,
        read_only=declared.read_only,
        destructive=declared.destructive,
        idempotent=declared.idempotent,
        open_world=declared.open_world,
    )
    audited = audited_use_case(
        declared.name, binding.use_case, mutates=not declared.read_only
    )
    return tool_handler(served, _reporting_failures(served, audited))


def _reporting_failures(
    declared: Tool[Any, Any], use_case: Callable[..., Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """The use case, logging what MCP can only answer as a generic `failed`."""

    @functools.wraps(use_case)
    async def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return await use_case(*args, **kwargs)
        except AppError as exc:
            if not declared.declares_error(exc.definition):
                logger.error("tool %s raised undeclared %s", declared.name, exc.code)
            raise
        except Exception:
            logger.exception("tool %s failed unexpectedly", declared.name)
            raise

    return run


def served_tools(settings: Settings, *, purpose: str) -> ToolGroup:
    """The memory tools as MCP registers them, in the documented order (docs/mcp.md)."""
    product = settings.product
    if product is not None and (not product.strip() or len(product.splitlines()) > 1):
        raise SettingsError(
            f"WENCHANG_PRODUCT must be one non-blank line, e.g. Acme; got {product!r}"
        )
    return tool_group(
        *(_served(binding, settings, purpose) for binding in memory_tools)
    )


def required_approvals(settings: Settings) -> frozenset[str]:
    """Registered names of the tools `require_approval` lists."""
    known = [binding.tool.name for binding in memory_tools]
    unknown = sorted(set(settings.require_approval) - set(known))
    if unknown:
        raise SettingsError(
            f"WENCHANG_REQUIRE_APPROVAL names unknown tools: {', '.join(unknown)}. "
            f"Use tool names without the prefix, from: {', '.join(known)}."
        )
    return frozenset(
        registered_name(settings, name) for name in settings.require_approval
    )


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection from the allow-lists; `host:*` also allows `host`."""
    hosts = list(settings.allowed_hosts)
    hosts += [host[:-2] for host in settings.allowed_hosts if host.endswith(":*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=list(settings.allowed_origins),
    )


def _runner_factory(
    tools: ToolGroup, context: Callable[[], AppContext]
) -> Callable[[Identity], ToolRunner]:
    def runner(identity: Identity) -> ToolRunner:
        # No lifespan: the runner would enter it on every call, and storage is
        # already open for the life of the process.
        return create_tool_runner(
            tools=tools,
            context_factory=lambda: replace(
                context(), identity=identity, surface=SURFACE
            ),
        )

    return runner


def _approve(
    required: frozenset[str],
) -> Callable[[Identity, Tool[Any, Any], object], bool]:
    def approve(identity: Identity, declaration: Tool[Any, Any], _: object) -> bool:
        # Writes are routine and version-guarded; only listed tools need the
        # client's approval, which the approval gate records for this call.
        del identity
        name = declaration.name
        return name not in required or approved_tool.get() == name

    return approve


def _keep_logging_plain() -> None:
    # Building the SDK's server calls logging.basicConfig with a Rich handler, which
    # lays out every line: ~0.8 ms per tool call, more than the call itself
    # (bench/RESULTS.md). basicConfig does nothing once the root logger has a
    # handler, so give it a plain one first: the same lines, on stderr, at INFO.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


def create_memory_mcp_server(
    settings: Settings,
    *,
    authenticate: Authenticate,
    context: Callable[[], AppContext],
    on_call: Sequence[ToolCallObserver] = (log_tool_call,),
) -> MCPServer[dict[str, Any]]:
    """The MCP server; fails with SettingsError when the settings cannot serve."""
    _keep_logging_plain()
    slots = prompt_slots(settings)
    prompt = build_memory_prompt(slots)
    tools = served_tools(settings, purpose=slots.purpose)
    required = required_approvals(settings)
    server = create_tool_mcp_server(
        tools=tools,
        authenticate=authenticate,
        runner_factory=_runner_factory(tools, context),
        approve=_approve(required),
        name="wenchang",
        instructions=prompt,
        transport_security=transport_security(settings),
    )
    server.resource(
        PROMPT_RESOURCE_URI,
        name="memory_prompt",
        title="Memory prompt",
        description="How to use memory; the same text as the server instructions.",
        mime_type="text/markdown",
    )(lambda: prompt)
    server.middleware.append(
        MemoryCalls(
            order=tuple(binding.tool.name for binding in tools),
            index_tool=registered_name(settings, get_memory_index_tool.name),
            prompt=prompt,
            gate=ApprovalGate(
                {binding.tool.name: binding.tool for binding in tools}, required
            ),
            observers=tuple(on_call),
        )
    )
    return server


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
    server = create_memory_mcp_server(
        settings, authenticate=fixed_identity(resolver), context=shared, on_call=on_call
    )
    async with shared.open(create_lifespan(settings, surface=SURFACE)):
        await server.run_stdio_async()
