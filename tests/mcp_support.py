"""MCP test helpers: a real server on loopback, client sessions, envelope checks.

Servers listen on 127.0.0.1 only; starting and stopping are bounded, and every
session runs under a deadline, so a hung server fails the test instead of
stalling the run.
"""

import json
import socket
import sys
import threading
import time
from collections.abc import AsyncGenerator, Generator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import uvicorn
from mcp.client import Client
from mcp.client.session import ElicitationFnT
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from starlette.types import ASGIApp

LOOPBACK = "127.0.0.1"
START_SECONDS = 20.0
STOP_SECONDS = 10.0
SESSION_SECONDS = 120.0

FILE_CAP = 20
"""Files per entity; the quota check fills the `quota` scope up to it."""

GRANTS: str = "user=alice:owner,team=acme:member,quota=q1:owner"
"""Three scopes: a private one, a role-gated one, and one for the file cap."""

LIMITS = {
    "max_file_bytes": "256",
    "max_files_per_entity": str(FILE_CAP),
    "list_page_size": "2",
    "write_roles": '{"team": ["admin"]}',
}
"""Small limits, so every error path is reachable with short inputs."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serve(app: ASGIApp) -> Generator[str]:
    """Run `app` under uvicorn in a thread on loopback; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host=LOOPBACK, port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on port {port}")
            time.sleep(0.02)
        yield f"http://{LOOPBACK}:{port}"
    finally:
        server.should_exit = True
        thread.join(STOP_SECONDS)


@asynccontextmanager
async def http_session(
    url: str,
    token: str,
    *,
    elicitation: ElicitationFnT | None = None,
    mode: str = "auto",
) -> AsyncGenerator[Client]:
    headers = {"authorization": f"Bearer {token}"}
    with anyio.fail_after(SESSION_SECONDS):
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(
                streamable_http_client(f"{url}/mcp", http_client=http),
                elicitation_callback=elicitation,
                mode=mode,
            ) as session,
        ):
            yield session


def stdio_parameters(cwd: Path, settings: Mapping[str, str]) -> StdioServerParameters:
    """`wenchang mcp` from this environment, with only the given settings."""
    command = str(Path(sys.executable).parent / "wenchang")
    return StdioServerParameters(
        command=command, args=["mcp"], env=dict(settings), cwd=cwd
    )


@asynccontextmanager
async def stdio_session(
    cwd: Path,
    settings: Mapping[str, str],
    *,
    elicitation: ElicitationFnT | None = None,
    mode: str = "auto",
) -> AsyncGenerator[Client]:
    with anyio.fail_after(SESSION_SECONDS):
        async with Client(
            stdio_parameters(cwd, settings), elicitation_callback=elicitation, mode=mode
        ) as session:
            yield session


def envelope(result: CallToolResult) -> dict[str, Any]:
    structured = result.structured_content
    assert structured is not None, result.content
    assert structured["schema_version"] == 2
    return structured


def ok(result: CallToolResult) -> Any:
    """The result of a successful call (and the envelope says so)."""
    payload = envelope(result)
    assert result.is_error is False, payload
    assert payload["ok"] is True
    return payload["result"]


CATEGORIES = {"recoverable", "permanent", "transient", "internal"}


def request_id(result: CallToolResult) -> str:
    """The request id a failed call names in its `_meta`."""
    named = (result.meta or {}).get("request_id")
    assert isinstance(named, str) and named, result.meta
    return named


def failed(result: CallToolResult, code: str) -> dict[str, Any]:
    """The error details of an application error with this code, in the envelope
    every surface shares: error, category, message, the fields, request_id."""
    payload = envelope(result)
    assert result.is_error is True
    assert payload["ok"] is False
    error = payload["error"]
    assert (error["kind"], error["code"]) == ("application_error", code), error
    details: dict[str, Any] = error["details"]
    assert details["message"] == error["message"]
    assert details["error"].endswith("Error") and details["category"] in CATEGORIES
    assert details["request_id"] == request_id(result)
    assert json.loads(texts(result)[0]) == payload
    return details


def refused(result: CallToolResult, kind: str) -> str:
    """The message of a failure that is not an application error."""
    payload = envelope(result)
    assert result.is_error is True
    assert payload["ok"] is False
    assert payload["error"]["kind"] == kind, payload
    request_id(result)
    message: str = payload["error"]["message"]
    return message


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]
