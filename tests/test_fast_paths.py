"""``WENCHANG_FAST_PATHS=off`` installs no fast path: the declared routes and MCP path.

That the answers are the same both ways is for the surface suites, which
``.ci/run`` runs with the fast paths on and off, and ``tests/test_mcp_direct.py``,
which compares the bytes and the audit trail of one conversation.
"""

from pathlib import Path
from typing import Literal

import pytest

from app.server import asgi
from app.server.mcp.server import build_memory_mcp
from app.server.routes import routes
from app.server.settings import Settings
from app.shared.identity import Identity


def _settings(tmp_path: Path, fast_paths: Literal["on", "off"]) -> Settings:
    tokens = str(tmp_path / "t.json")
    return Settings(storage="memory://", tokens_file=tokens, fast_paths=fast_paths)


def test_off_serves_the_declared_routes(tmp_path: Path) -> None:
    assert asgi.served_routes(_settings(tmp_path, "off")) is routes
    assert asgi.served_routes(_settings(tmp_path, "on")) is not routes


@pytest.mark.parametrize("fast_paths", ["on", "off"])
def test_off_answers_every_tool_call_by_the_sdk(
    tmp_path: Path, fast_paths: Literal["on", "off"]
) -> None:
    built = build_memory_mcp(
        _settings(tmp_path, fast_paths),
        authenticate=lambda _: Identity(grants={}),
        context=lambda: pytest.fail("no call runs here"),
    )

    assert (built.direct is None) == (fast_paths == "off")
