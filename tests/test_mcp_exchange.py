"""`/mcp` answers a stateless tool request in one exchange; the rest goes to the SDK.

A handshake-era POST with one `tools/call` or `tools/list` request is answered
without the SDK's per-request transport (no session, stream or task per call);
everything else still reaches the SDK's transport and gets its answers.
"""

import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server import streamable_http
from mcp.types import INVALID_PARAMS, LATEST_PROTOCOL_VERSION

from tests.http_support import Api, open_api

JSON_OR_SSE = "application/json, text/event-stream"
HANDSHAKE_VERSION = "2025-11-25"
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
ENVELOPE = "io.modelcontextprotocol"


def rpc(method: str, params: dict[str, Any] | None = None, **extra: Any) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, **extra}
    if params is not None:
        message["params"] = params
    return message


async def post(
    api: Api, body: Any, accept: str = JSON_OR_SSE, **headers: str
) -> httpx.Response:
    sent = api.alice | {"accept": accept, "host": "127.0.0.1:8000"} | headers
    return await api.http.post("/mcp", json=body, headers=sent)


@pytest.fixture
def transports(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every SDK transport built while the test runs."""
    built: list[object] = []
    original = streamable_http.StreamableHTTPServerTransport.__init__

    def counting(self: object, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        original(self, *args, **kwargs)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(
        streamable_http.StreamableHTTPServerTransport, "__init__", counting
    )
    return built


async def test_tool_requests_need_no_transport_of_their_own(
    tmp_path: Path, transports: list[object]
) -> None:
    """tools/list and tools/call answer in JSON with no per-request transport
    (a fast path: it is on here whatever the test run's WENCHANG_FAST_PATHS)."""
    async with open_api(tmp_path, fast_paths="on") as api:
        listed = await post(api, rpc("tools/list", {}, id=1))
        called = await post(
            api,
            rpc("tools/call", {"name": "get_memory_index", "arguments": {}}, id="two"),
            **{"mcp-protocol-version": HANDSHAKE_VERSION},
        )
        assert transports == []
        opened = await post(
            api,
            rpc(
                "initialize",
                {
                    "protocolVersion": HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
                id=3,
            ),
        )

    assert len(transports) == 1
    assert listed.headers["content-type"] == "application/json"
    assert listed.json()["id"] == 1
    assert [tool["name"] for tool in listed.json()["result"]["tools"]][:2] == [
        "get_memory_index",
        "read_file",
    ]
    assert called.json()["id"] == "two"
    assert called.json()["result"]["structuredContent"]["ok"] is True
    wenchang = {"name": "wenchang", "version": version("wenchang")}
    assert opened.json()["result"]["serverInfo"] == wenchang
    assert (
        wenchang["version"]
        == tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    )


async def test_with_the_fast_paths_off_the_sdk_s_transport_answers_a_tool_request(
    tmp_path: Path, transports: list[object]
) -> None:
    """The declared path: no single exchange in front of the SDK's transport."""
    async with open_api(tmp_path, fast_paths="off") as api:
        listed = await post(api, rpc("tools/list", {}, id=1))

    assert len(transports) == 1
    assert listed.headers["content-type"] == "application/json"
    assert listed.json()["id"] == 1


async def test_a_malformed_tool_request_is_a_protocol_error_with_its_id(
    tmp_path: Path,
) -> None:
    """A tools/call without a tool name answers INVALID_PARAMS for that request."""
    async with open_api(tmp_path) as api:
        response = await post(api, rpc("tools/call", {"arguments": {}}, id=7))

    assert response.status_code == 200
    answer = response.json()
    assert answer["id"] == 7
    assert answer["error"]["code"] == INVALID_PARAMS


async def test_what_one_exchange_does_not_answer_reaches_the_sdk(
    tmp_path: Path,
) -> None:
    """Notifications, bad JSON, a JSON-less Accept and a modern request keep the
    SDK's answers."""
    async with open_api(tmp_path) as api:
        notified = await post(api, rpc("notifications/initialized"))
        unparsable = await api.http.post(
            "/mcp",
            content=b"{",
            headers=api.alice
            | {"accept": JSON_OR_SSE, "host": "127.0.0.1:8000"}
            | {"content-type": "application/json"},
        )
        stream_only = await post(
            api, rpc("tools/list", {}, id=1), accept="text/event-stream"
        )
        modern = await post(
            api,
            rpc(
                "tools/list",
                {
                    "_meta": {
                        f"{ENVELOPE}/protocolVersion": LATEST_PROTOCOL_VERSION,
                        f"{ENVELOPE}/clientCapabilities": {},
                    }
                },
                id=2,
            ),
            **{
                "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
                "mcp-method": "tools/list",
            },
        )

    assert notified.status_code == 202
    assert unparsable.status_code == 400
    assert stream_only.status_code == 406
    assert modern.status_code == 200, modern.text
    assert modern.json()["result"]["tools"][0]["name"] == "get_memory_index"
