"""Two in-process apps on one storage, as two processes of one deployment."""

from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from tenchi.testing import open_http

from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.transports import TokenRegistry


@asynccontextmanager
async def two_replicas(
    tmp_path: Path, **settings: Any
) -> AsyncGenerator[tuple[httpx.AsyncClient, httpx.AsyncClient, dict[str, str]]]:
    """Two apps on one storage, as two processes of a deployment; one token."""
    tokens = TokenRegistry()
    token = tokens.issue(Identity(grants={"user": Grant("alice", "owner")}))
    options: dict[str, Any] = {"tokens_file": str(tmp_path / "tokens.json")}
    async with AsyncExitStack() as stack:
        first, second = [
            await stack.enter_async_context(
                open_http(build_app(Settings(**options | settings), resolver=tokens))
            )
            for _ in range(2)
        ]
        yield first, second, {"Authorization": f"Bearer {token}"}
