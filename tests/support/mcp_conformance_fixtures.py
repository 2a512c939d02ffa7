"""CONFORMANCE FIXTURES, test harness only: the resources the official MCP
conformance suite reads from every server under test.

`@modelcontextprotocol/conformance` reads ``test://static-text``,
``test://static-binary`` and ``test://template/{id}/data``, which the SDKs'
reference servers define. Wenchang never serves them: only
``tests/test_mcp_conformance.py`` adds them, through ``build_app``'s
``mcp_extensions`` and the SDK's public ``MCPServer.resource``, so a read of
one passes through the served app's real path (bearer guard, MCP middleware,
the SDK's serialisation) like a read of a memory file.
"""

from mcp.server.mcpserver import MCPServer

STATIC_TEXT = "This is the content of the static text resource."
STATIC_BINARY = bytes(range(16))
"""Arbitrary bytes; the suite checks only that a ``blob`` comes back."""


def add_conformance_fixtures(server: MCPServer[dict[str, object]]) -> None:
    """Register the suite's three fixture resources on ``server``."""
    server.resource(
        "test://static-text",
        name="static_text",
        description="Conformance fixture: static text.",
        mime_type="text/plain",
    )(lambda: STATIC_TEXT)
    server.resource(
        "test://static-binary",
        name="static_binary",
        description="Conformance fixture: static binary.",
        mime_type="application/octet-stream",
    )(lambda: STATIC_BINARY)

    def template_data(id: str) -> str:
        return f"Resource data for ID: {id}"

    server.resource(
        "test://template/{id}/data",
        name="template_data",
        description="Conformance fixture: a template reflecting its parameter.",
        mime_type="text/plain",
    )(template_data)
