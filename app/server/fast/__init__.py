"""Measured speed-ups that bypass the declared serving path, behind one setting.

Every request has a declared path: HTTP through Tenchi's routes
(``app.server.routes.routes``), MCP through the SDK's streamable HTTP transport
and ``tenchi.mcp``. With ``WENCHANG_FAST_PATHS=on`` (the default) the app also
installs the paths of this package, each justified by a measured gain in
``bench/RESULTS.md``:

- ``passthrough``: the ``/v1`` routes as served, every JSON body serialised
  once by its model and passed through (no per-response re-check);
- ``mcp_exchange``: a stateless ``tools/call`` / ``tools/list`` POST answered by
  the SDK's single-request kernel, without a transport per request;
- ``mcp_direct`` (with ``mcp_input_check`` and ``mcp_index``): a plain tool
  call answered by calling its tool.

``off`` installs none of them. Only public APIs of our libraries are used here;
a hook these paths would need from Tenchi is written up in ``docs/upstream.md``.
The HTTP and MCP surface suites run with the setting off too (``.ci/run``).
"""

from app.server.settings import Settings


def fast_paths_on(settings: Settings) -> bool:
    """Whether ``settings`` install the fast paths (``WENCHANG_FAST_PATHS``)."""
    return settings.fast_paths == "on"
