"""A full run over every surface leaves no token and no memory content in the logs.

One live ``wenchang serve`` (at info level, as deployed) is driven through the
HTTP API, the MCP endpoint and the typed client: every operation, successes and
failures alike (version conflicts carry content in their details, a wrong token
is presented, the rate limit is hit, an idempotent retry is replayed). Then
everything the process printed is searched for every token secret, the fake
token, and each piece of content, description, alias, line and replacement.
"""

import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

import httpx
from wenchang_client import AsyncMemoryClient
from wenchang_client.errors import VersionConflictError

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.mcp_support import http_session
from tests.support.server import ServerProcess, running_server

MARK = uuid.uuid4().hex[:12]
CONTENT = f"- [stated] content-{MARK}\n"
DESCRIPTION = f"description-{MARK}"
ALIAS = f"alias-{MARK}"
LINE = f"- [observed] line-{MARK}"
NEW = f"replacement-{MARK}"
CLIENT_CONTENT = f"- [stated] client-{MARK}\n"
MCP_CONTENT = f"- [stated] mcp-{MARK}\n"
RATE_LIMIT = 100
FAKE_TOKEN = f"wct_fake{MARK}{'x' * 30}"
SECRETS = [
    *(CONTENT.strip(), DESCRIPTION, ALIAS, LINE, NEW),
    *(CLIENT_CONTENT.strip(), MCP_CONTENT.strip(), FAKE_TOKEN, f"-{MARK}"),
]


def body(content: str = CONTENT) -> dict[str, Any]:
    return {"content": content, "description": DESCRIPTION, "aliases": [ALIAS]}


async def http_session_of_every_operation(url: str, alice: str, bob: str) -> None:
    auth = {"Authorization": f"Bearer {alice}"}
    path = "/v1/files/user/notes/secret"
    async with httpx.AsyncClient(base_url=url, headers=auth) as http:
        created = await http.put(
            path, json=body(), headers={"If-None-Match": "*", "Idempotency-Key": MARK}
        )
        assert created.status_code == 201, created.text
        replayed = await http.put(
            path, json=body(), headers={"If-None-Match": "*", "Idempotency-Key": MARK}
        )
        assert replayed.status_code == 201
        version = created.json()["version"]
        conflict = await http.put(path, json=body(), headers={"If-Match": '"stale"'})
        assert conflict.status_code == 412 and MARK in conflict.text
        appended = await http.post(
            f"{path}/lines", json={"line": LINE}, headers={"If-Match": f'"{version}"'}
        )
        assert appended.status_code == 200, appended.text
        version = appended.json()["version"]
        replaced = await http.post(
            f"{path}/replace",
            json={"old_string": f"line-{MARK}", "new_string": NEW},
            headers={"If-Match": f'"{version}"'},
        )
        assert replaced.status_code == 200, replaced.text
        mismatch = await http.post(
            f"{path}/replace",
            json={"old_string": "absent", "new_string": NEW},
            headers={"If-Match": f'"{replaced.json()["version"]}"'},
        )
        assert mismatch.status_code == 409
        for read in ("/v1/index", "/v1/files/user", "/v1/files/user/notes", path):
            assert (await http.get(read)).status_code == 200
        invalid = await http.put(
            "/v1/files/user/Bad/name", json=body(), headers={"If-None-Match": "*"}
        )
        assert invalid.status_code == 422
        wrong = await http.get(
            "/v1/index", headers={"Authorization": f"Bearer {FAKE_TOKEN}"}
        )
        assert wrong.status_code == 401
        deleted = await http.delete(
            path, headers={"If-Match": f'"{replaced.json()["version"]}"'}
        )
        assert deleted.status_code == 204
        assert (await http.get(path)).status_code == 404
        bob_auth = {"Authorization": f"Bearer {bob}"}
        statuses = [
            (await http.get("/v1/index", headers=bob_auth)).status_code
            for _ in range(RATE_LIMIT + 1)
        ]
        assert statuses[-1] == 429


async def client_session(url: str, alice: str) -> None:
    async with AsyncMemoryClient(url, token=alice) as client:
        where = ("user", "notes", "client")
        content, description = CLIENT_CONTENT, DESCRIPTION
        written = await client.write_file(
            *where,
            content=content,
            description=description,
            aliases=[ALIAS],
            expected_version=None,
        )
        await client.append_line(*where, line=LINE, expected_version=written.version)
        with contextlib.suppress(VersionConflictError):
            await client.write_file(
                *where,
                content=content,
                description=description,
                aliases=[],
                expected_version="x",
            )
        await client.read_file(*where)


async def mcp_session(url: str, alice: str) -> None:
    async with http_session(url, alice) as session:
        arguments = {"scope": "user", "area": "notes", "name": "mcp"}
        written = await session.call_tool(
            "write_file",
            arguments
            | {"content": MCP_CONTENT, "description": DESCRIPTION, "aliases": [ALIAS]}
            | {"expected_version": None},
        )
        assert not written.is_error, written
        stale = await session.call_tool(
            "append_line", arguments | {"line": LINE, "expected_version": "stale"}
        )
        assert stale.is_error
        for tool, extra in (("read_file", arguments), ("get_memory_index", {})):
            assert not (await session.call_tool(tool, extra)).is_error


def test_no_token_or_memory_content_ever_reaches_the_logs(tmp_path: Path) -> None:
    """Search every byte the server printed for every secret of a full run."""
    tokens = tmp_path / "tokens.json"
    alice, _ = create_token(tokens, {"user": Grant("alice", "owner")}, label="desk")
    bob, _ = create_token(tokens, {"user": Grant("bob", "owner")})
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'wenchang.db'}",
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_RATE_LIMIT": str(RATE_LIMIT),
    }
    server: ServerProcess
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as server:

        async def everything() -> None:
            await http_session_of_every_operation(server.url, alice, bob)
            await client_session(server.url, alice)
            await mcp_session(server.url, alice)

        asyncio.run(everything())
    output = server.stdout() + server.stderr()

    assert "/v1/index" in output, "the server logged nothing: the scan would be vacuous"
    leaked = [secret for secret in [alice, bob, *SECRETS] if secret in output]
    assert leaked == []
    assert alice[:16] not in output and bob[:16] not in output
    assert "Traceback" not in output
