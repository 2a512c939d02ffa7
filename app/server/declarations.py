"""Names for a declaration whatever its request and result: the server handles
them side by side (every tool, every response), so their types vary per item."""

from typing import Any

from mcp.server.context import ServerRequestContext
from tenchi.contracts import Contract
from tenchi.responses import ResponseDef
from tenchi.tools import Tool, ToolBinding

AnyTool = Tool[Any, Any]
AnyToolBinding = ToolBinding[Any, Any]
AnyResponse = ResponseDef[Any, Any]
AnyContract = Contract[Any, Any]
McpRequestContext = ServerRequestContext[Any, Any]
"""The SDK's context of one request, whatever this server's lifespan state."""
