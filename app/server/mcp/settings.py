"""What the MCP surface reads from the settings, checked before anything is served.

A bad combination stops startup with a SettingsError that names the variable:
a product that is not one line, an approval list naming a tool that does not
exist, a product or purpose that pushes a tool description over its limit.
"""

from tenchi.tools import ToolGroup, tool_group

from app.features.memory.tools import history_tools
from app.features.memory.tools import tools as memory_tools
from app.features.search.tools import tools as search_tools
from app.server.mcp.prompt import (
    DEFAULT_PURPOSE,
    DEFAULT_SCOPE_GUIDANCE,
    DEFAULT_SEED_AREAS,
    PromptSlots,
)
from app.server.settings import Settings, SettingsError

MAX_TOOL_DESCRIPTION_CHARS = 2000


def prompt_slots(settings: Settings) -> PromptSlots:
    return PromptSlots(
        purpose=settings.prompt_purpose or DEFAULT_PURPOSE,
        scope_guidance=settings.prompt_scope_guidance or DEFAULT_SCOPE_GUIDANCE,
        seed_areas=settings.prompt_seed_areas or DEFAULT_SEED_AREAS,
        systems_of_record=settings.prompt_systems_of_record,
        history=settings.history_tools,
    )


def registered_name(settings: Settings, name: str) -> str:
    return f"{settings.tool_prefix}_{name}" if settings.tool_prefix else name


def require_one_line_product(settings: Settings) -> str | None:
    """The product name, which must be one non-blank line when set."""
    product = settings.product
    if product is not None and (not product.strip() or len(product.splitlines()) > 1):
        raise SettingsError(
            f"WENCHANG_PRODUCT must be one non-blank line, e.g. Acme; got {product!r}"
        )
    return product


def require_description_fits(name: str, description: str) -> str:
    """A served tool description, which must fit the MCP description limit."""
    if len(description) > MAX_TOOL_DESCRIPTION_CHARS:
        raise SettingsError(
            f"The MCP description of tool {name} is {len(description)} characters; "
            f"the limit is {MAX_TOOL_DESCRIPTION_CHARS}. Shorten WENCHANG_PRODUCT "
            "or WENCHANG_PROMPT_PURPOSE."
        )
    return description


def listed_tools(settings: Settings) -> ToolGroup:
    """The seven, search, then (unless WENCHANG_HISTORY_TOOLS=false) history's."""
    if settings.history_tools:
        return tool_group(memory_tools, search_tools, history_tools)
    return tool_group(memory_tools, search_tools)


def required_approvals(settings: Settings) -> frozenset[str]:
    """Registered names of the tools `require_approval` lists."""
    known = [binding.tool.name for binding in listed_tools(settings)]
    unknown = sorted(set(settings.require_approval) - set(known))
    if unknown:
        raise SettingsError(
            f"WENCHANG_REQUIRE_APPROVAL names unknown tools: {', '.join(unknown)}. "
            f"Use tool names without the prefix, from: {', '.join(known)}."
        )
    return frozenset(
        registered_name(settings, name) for name in settings.require_approval
    )
