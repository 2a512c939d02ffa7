"""The composed Wenchang app over memory storage and a real token file, for HTTP tests.

``open_api`` builds the app with ``build_app`` exactly as ``wenchang serve``
does, creates bearer tokens with the token CLI's own ``create_token``, and runs
the lifespan around an in-process httpx client. ``state`` reads everything the
caller can see, so a test can prove a rejected request changed nothing.
"""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from tenchi.testing import open_http

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.errors import GUIDANCE, Category
from app.shared.identity import Grant
from tests.support.storage_adapters import storage_url_for_tests

Headers = dict[str, str]
FILE = "/v1/files/user/notes/tea"
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Api:
    """A running app and the Authorization headers of its token holders.

    alice: user=alice:owner, team=t-1:member (no label, so writes record `http`);
    desktop: alice's user scope under the label `claude-desktop`;
    bob: user=bob:owner, team=t-1:admin; expired: alice's grants, expired.
    """

    http: httpx.AsyncClient
    alice: Headers
    desktop: Headers
    bob: Headers
    expired: Headers


def bearer(secret: str) -> Headers:
    return {"Authorization": f"Bearer {secret}"}


def _tokens(path: Path) -> dict[str, Headers]:
    alice = {"user": Grant("alice", "owner"), "team": Grant("t-1", "member")}
    bob = {"user": Grant("bob", "owner"), "team": Grant("t-1", "admin")}
    made = {
        "alice": create_token(path, alice),
        "desktop": create_token(
            path, {"user": Grant("alice", "owner")}, label="claude-desktop"
        ),
        "bob": create_token(path, bob),
        "expired": create_token(path, alice, expires_in_days=1, now=LONG_AGO),
    }
    return {holder: bearer(secret) for holder, (secret, _) in made.items()}


@asynccontextmanager
async def open_api(tmp_path: Path, **settings: Any) -> AsyncGenerator[Api]:
    """The app with small limits (page size 2, 64-byte files) unless overridden."""
    tokens_file = tmp_path / "tokens.json"
    headers = _tokens(tokens_file)
    options: dict[str, Any] = {
        "storage": storage_url_for_tests(tmp_path),
        "tokens_file": str(tokens_file),
        "index_cache": "none",
        "list_page_size": 2,
        "max_file_bytes": 64,
        "write_roles": {"team": ["owner", "admin"]},
    }
    app = build_app(
        Settings(**(options | settings)), resolver=TokenFileResolver(tokens_file)
    )
    async with open_http(app) as http:
        yield Api(http=http, **headers)


def file_body(
    content: str = "- [stated] Likes tea.\n",
    description: str = "Drinks",
    aliases: list[str] | None = None,
) -> dict[str, Any]:
    return {"content": content, "description": description, "aliases": aliases or []}


async def create(
    api: Api, path: str = FILE, content: str = "- [stated] Likes tea.\n"
) -> dict[str, Any]:
    """Create a file as alice; fail the test unless it is a 201."""
    response = await api.http.put(
        path,
        json=file_body(content),
        headers=api.alice | {"If-None-Match": "*"},
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def state(api: Api, headers: Headers | None = None) -> list[Any]:
    """Every file the caller's index reaches, with its content and version."""
    headers = headers or api.alice
    index = await api.http.get("/v1/index", headers=headers)
    assert index.status_code == 200, index.text
    seen: list[Any] = [index.json()]
    for entry in index.json()["entries"]:
        path = f"/v1/files/{entry['scope']}/{entry['area']}/{entry['name']}"
        seen.append((await api.http.get(path, headers=headers)).json())
    return seen


MCP_WRITE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "write_file",
        "arguments": {"scope": "user", "area": "notes", "name": "tea"}
        | file_body()
        | {"expected_version": None},
    },
}
"""A JSON-RPC tools/call that creates FILE, for raw POSTs to /mcp."""


def if_match(version: str) -> Headers:
    return {"If-Match": f'"{version}"'}


def assert_app_error(
    response: httpx.Response, status: int, code: str, **details: Any
) -> None:
    """An app error envelope: status, code, exactly ``details`` plus the message."""
    assert response.status_code == status, response.text
    assert response.headers["x-tenchi-error-source"] == "app"
    envelope = response.json()
    assert envelope["code"] == code
    payload = dict(envelope["details"])
    message = payload.pop("message")
    assert payload == details
    assert message == envelope["message"]
    assert message.endswith(GUIDANCE[Category(details["category"])])


def assert_validation_error(response: httpx.Response) -> None:
    """Tenchi's request-syntax rejection, before any operation runs."""
    assert response.status_code == 422, response.text
    assert response.headers["x-tenchi-error-source"] == "framework"
    assert response.json()["code"] == "VALIDATION_ERROR"
