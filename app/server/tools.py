"""The application's tool group: what `tools.json` snapshots and MCP serves."""

from tenchi.tools import tool_group

from app.features.memory.tools import history_tools
from app.features.memory.tools import tools as memory_tools
from app.features.search.tools import tools as search_tools

tools = tool_group(memory_tools, search_tools, history_tools)
