"""The memory tools as MCP serves them: renamed, described for the product and
purpose, and logging what MCP can only answer as a generic failure."""

import dataclasses
import functools
import logging
import re
from collections.abc import Awaitable, Callable

from tenchi.errors import AppError
from tenchi.tools import ToolGroup, tool_group, tool_handler

from app.features.memory.tools import get_memory_index_tool
from app.features.memory.use_cases.get_memory_index import built_memory_index
from app.server.auditing import audited_use_case
from app.server.declarations import AnyTool, AnyToolBinding
from app.server.fast.mcp_index import DirectResult, index_result
from app.server.mcp.settings import (
    listed_tools,
    registered_name,
    require_description_fits,
    require_one_line_product,
)
from app.server.settings import Settings

_PRODUCT_SLOT = re.compile(r"\bmemory\b")
logger = logging.getLogger("wenchang.mcp")


def describe(declaration: AnyTool, *, product: str | None, purpose: str) -> str:
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


@functools.cache
def _renamed(declared: AnyTool, name: str, description: str) -> AnyTool:
    # A new Tool derives its schemas and validators (~30 ms); every app a process
    # builds (the tests build hundreds) serves the same few declarations.
    return dataclasses.replace(declared, name=name, description=description)


def _served(
    binding: AnyToolBinding, settings: Settings, purpose: str
) -> AnyToolBinding:
    declared = binding.tool
    name = registered_name(settings, declared.name)
    description = require_description_fits(
        name, describe(declared, product=settings.product, purpose=purpose)
    )
    served = _renamed(declared, name, description)
    audited = audited_use_case(
        declared.name, binding.use_case, mutates=not declared.read_only
    )
    return tool_handler(served, _reporting_failures(served, audited))


def _reporting_failures[T](
    declared: AnyTool, use_case: Callable[..., Awaitable[T]]
) -> Callable[..., Awaitable[T]]:
    """The use case, logging what MCP can only answer as a generic `failed`."""

    @functools.wraps(use_case)
    async def run(*args: object, **kwargs: object) -> T:
        try:
            return await use_case(*args, **kwargs)
        except AppError as exc:
            if not declared.declares_error(exc.definition):
                logger.error("tool %s raised undeclared %s", declared.name, exc.code)
            raise
        except Exception:  # logged, then re-raised unchanged
            logger.exception("tool %s failed unexpectedly", declared.name)
            raise

    return run


def served_tools(settings: Settings, *, purpose: str) -> ToolGroup:
    """The memory tools as MCP registers them, in the documented order (docs/mcp.md)."""
    require_one_line_product(settings)
    return tool_group(
        *(_served(binding, settings, purpose) for binding in listed_tools(settings))
    )


def direct_results(settings: Settings, tools: ToolGroup) -> dict[str, DirectResult]:
    """The tools ``fast.mcp_direct`` answers without their model (the index), each
    audited and logging failures as its served binding does."""
    name = registered_name(settings, get_memory_index_tool.name)
    served = next((b.tool for b in tools if b.tool.name == name), None)
    if served is None:
        return {}
    audited = audited_use_case(
        get_memory_index_tool.name, built_memory_index, mutates=False
    )
    return {name: index_result(_reporting_failures(served, audited))}
