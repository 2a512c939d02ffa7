"""The key that seals MCP approval questions, shared by every replica."""

import hashlib
import hmac

from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from app.server.runtime import cursor_key_from
from app.server.settings import Settings

STATE_KEY_LABEL = b"wenchang mcp request state v1"


def share_request_state_key(
    server: MCPServer[dict[str, object]], settings: Settings
) -> None:
    """Seal approval questions with a key every replica shares, not a per-process one.

    The key is derived from the cursor secret (``WENCHANG_CURSOR_SECRET`` or the
    token file, both shared by replicas), so an approval asked by one replica
    can be answered through any other.
    """
    key = hmac.new(cursor_key_from(settings), STATE_KEY_LABEL, hashlib.sha256).digest()
    security = RequestStateSecurity(keys=[key])
    chain = server.middleware
    for position, middleware in enumerate(chain):
        if isinstance(middleware, RequestStateBoundary):
            chain[position] = RequestStateBoundary(
                security, default_audience=server.name
            )
