"""HTTP security: rate limits, Idempotency-Key, body limits, CORS, MCP allow-lists.

Every app here is the one ``wenchang serve`` builds (``build_app``), with real
bearer tokens from a token file, run in process.
"""

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenchi.testing import open_http

from app.infra.tokens.token_file import create_token
from app.infra.tokens.token_file_resolver import TokenFileResolver
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant
from tests.http_support import (
    FILE,
    MCP_WRITE,
    Api,
    bearer,
    file_body,
    if_match,
    open_api,
)
from tests.support.redis_server import RedisServer

ALICE = {"user": Grant("alice", "owner")}
LINE = {"line": "- [stated] Likes oolong"}


async def put_new(api: Api, headers: dict[str, str], **extra: str) -> httpx.Response:
    return await api.http.put(
        FILE, json=file_body(), headers=headers | {"If-None-Match": "*"} | extra
    )


async def test_a_token_over_its_rate_limit_gets_429_with_retry_after(
    tmp_path: Path,
) -> None:
    """The request after the limit is RATE_LIMITED; the window tells when to retry."""
    async with open_api(tmp_path, rate_limit=3, rate_limit_window=60) as api:
        allowed = [await api.http.get("/v1/index", headers=api.alice) for _ in range(3)]

        refused = await api.http.get("/v1/index", headers=api.alice)

    assert [r.status_code for r in allowed] == [200, 200, 200]
    assert refused.status_code == 429
    assert refused.json()["code"] == "RATE_LIMITED"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60


async def test_rate_limits_are_per_token_and_spare_public_routes(
    tmp_path: Path,
) -> None:
    """One exhausted token slows neither another token nor /health."""
    async with open_api(tmp_path, rate_limit=2) as api:
        for _ in range(3):
            await api.http.get("/v1/index", headers=api.alice)

        other = await api.http.get("/v1/index", headers=api.bob)
        health = await api.http.get("/health")

    assert other.status_code == 200
    assert health.status_code == 200


async def test_an_unauthenticated_request_is_refused_before_any_allowance(
    tmp_path: Path,
) -> None:
    """A bad token is a 401, never a 429, however often it is tried."""
    async with open_api(tmp_path, rate_limit=1) as api:
        answers = [
            (await api.http.get("/v1/index", headers=bearer("wct_guess"))).status_code
            for _ in range(3)
        ]

    assert answers == [401, 401, 401]


@asynccontextmanager
async def replicas(
    tmp_path: Path, count: int, **settings: Any
) -> AsyncGenerator[tuple[list[httpx.AsyncClient], dict[str, str]]]:
    """``count`` apps built from the same settings, as replicas of one deployment."""
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, ALICE)
    options: dict[str, Any] = {"tokens_file": str(tokens), "index_cache": "none"}
    options |= settings
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                open_http(
                    build_app(Settings(**options), resolver=TokenFileResolver(tokens))
                )
            )
            for _ in range(count)
        ]
        yield clients, bearer(secret)


async def spend(
    clients: list[httpx.AsyncClient], headers: dict[str, str], requests: int
) -> list[int]:
    """Round-robin ``requests`` index reads over the replicas; their statuses."""
    return [
        (await clients[n % len(clients)].get("/v1/index", headers=headers)).status_code
        for n in range(requests)
    ]


async def test_replicas_keep_their_own_windows_by_default(tmp_path: Path) -> None:
    """By default a window lives in its process: counting a request writes nothing."""
    storage = f"sqlite:///{tmp_path / 'wenchang.db'}"
    async with replicas(tmp_path, 2, storage=storage, rate_limit=2) as (
        clients,
        headers,
    ):
        statuses = await spend(clients, headers, 6)

    assert statuses == [200, 200, 200, 200, 429, 429]


async def test_the_default_limit_does_not_throttle_a_busy_client(
    tmp_path: Path,
) -> None:
    """1,300 requests in a row from one token (over the old 1,200) all succeed."""
    async with replicas(tmp_path, 1) as (clients, headers):
        statuses = await spend(clients, headers, 1300)

    assert set(statuses) == {200}


async def test_replicas_on_one_sqlite_file_can_share_each_tokens_window(
    tmp_path: Path,
) -> None:
    """WENCHANG_RATE_LIMIT_STORE=sqlite:///… shares windows between processes."""
    database = tmp_path / "wenchang.db"
    async with replicas(
        tmp_path,
        2,
        storage=f"sqlite:///{database}",
        rate_limit_store=f"sqlite:///{database}",
        rate_limit=4,
    ) as (clients, headers):
        statuses = await spend(clients, headers, 6)

    assert statuses == [200, 200, 200, 200, 429, 429]


async def test_replicas_sharing_redis_share_each_tokens_window(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """With WENCHANG_RATE_LIMIT_STORE=redis://… replicas on any storage share it."""
    async with replicas(
        tmp_path,
        3,
        storage="memory://",
        rate_limit_store=redis_server.url,
        rate_limit=4,
    ) as (clients, headers):
        statuses = await spend(clients, headers, 6)

    assert statuses == [200, 200, 200, 200, 429, 429]


async def test_a_retried_create_with_its_key_returns_the_first_response(
    tmp_path: Path,
) -> None:
    """The retry is answered from the record: same status, body and ETag."""
    async with open_api(tmp_path) as api:
        key = {"Idempotency-Key": "create-1"}
        first = await put_new(api, api.alice, **key)
        retry = await put_new(api, api.alice, **key)
        without_key = await put_new(api, api.alice)

    assert (first.status_code, retry.status_code) == (201, 201)
    assert retry.json() == first.json()
    assert retry.headers["ETag"] == first.headers["ETag"]
    assert without_key.status_code == 412


async def test_a_retried_replace_with_its_key_applies_once(tmp_path: Path) -> None:
    """A replace whose edit keeps matching would apply twice without the key."""
    async with open_api(tmp_path) as api:
        created = (await put_new(api, api.alice)).json()
        body = {"old_string": "tea", "new_string": "tea and"}
        headers = api.alice | if_match(created["version"]) | {"Idempotency-Key": "r1"}
        first = await api.http.post(f"{FILE}/replace", json=body, headers=headers)
        retry = await api.http.post(f"{FILE}/replace", json=body, headers=headers)
        stored = (await api.http.get(FILE, headers=api.alice)).json()

    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json() == stored
    assert stored["content"].count("tea and") == 1


async def test_retried_append_and_delete_with_their_keys_apply_once(
    tmp_path: Path,
) -> None:
    """Both answer their first response again; storage changed once."""
    async with open_api(tmp_path) as api:
        created = (await put_new(api, api.alice)).json()
        line_headers = api.alice | if_match(created["version"])
        line_headers |= {"Idempotency-Key": "l1"}
        appended = [
            await api.http.post(f"{FILE}/lines", json=LINE, headers=line_headers)
            for _ in range(2)
        ]
        delete_headers = api.alice | if_match(appended[0].json()["version"])
        delete_headers |= {"Idempotency-Key": "d1"}
        deleted = [
            await api.http.delete(FILE, headers=delete_headers) for _ in range(2)
        ]
        gone = await api.http.get(FILE, headers=api.alice)

    assert [r.status_code for r in appended] == [200, 200]
    assert appended[0].json() == appended[1].json()
    assert appended[0].json()["content"].count(LINE["line"]) == 1
    assert [r.status_code for r in deleted] == [204, 204]
    assert gone.status_code == 404


async def test_a_key_reused_for_another_request_is_a_conflict(tmp_path: Path) -> None:
    """IDEMPOTENCY_CONFLICT, and the second request is not applied."""
    async with open_api(tmp_path) as api:
        await put_new(api, api.alice, **{"Idempotency-Key": "k"})
        other = await api.http.put(
            "/v1/files/user/notes/coffee",
            json=file_body(),
            headers=api.alice | {"If-None-Match": "*", "Idempotency-Key": "k"},
        )
        coffee = await api.http.get("/v1/files/user/notes/coffee", headers=api.alice)

    assert other.status_code == 409
    assert other.json()["code"] == "IDEMPOTENCY_CONFLICT"
    assert coffee.status_code == 404


async def test_idempotency_keys_are_scoped_to_the_token(tmp_path: Path) -> None:
    """Another token's identical key and body is its own request, never a replay."""
    async with open_api(tmp_path) as api:
        key = {"Idempotency-Key": "shared-key"}
        await put_new(api, api.alice, **key)

        desktop = await put_new(api, api.desktop, **key)

    assert desktop.status_code == 412
    assert desktop.json()["code"] == "VERSION_CONFLICT"


async def test_concurrent_retries_with_one_key_apply_once(tmp_path: Path) -> None:
    """Eight copies in flight at once: one write, the rest replay it or wait."""
    async with open_api(tmp_path) as api:
        created = (await put_new(api, api.alice)).json()
        headers = api.alice | if_match(created["version"]) | {"Idempotency-Key": "c"}

        answers = await asyncio.gather(
            *(
                api.http.post(f"{FILE}/lines", json=LINE, headers=headers)
                for _ in range(8)
            )
        )
        stored = (await api.http.get(FILE, headers=api.alice)).json()

    codes = {r.status_code for r in answers}
    assert codes <= {200, 409}
    assert all(
        r.json()["code"] == "IDEMPOTENCY_IN_PROGRESS"
        for r in answers
        if r.status_code == 409
    )
    assert stored["content"].count(LINE["line"]) == 1


async def test_a_body_over_the_request_limit_is_refused_unread(
    tmp_path: Path,
) -> None:
    """WENCHANG_MAX_REQUEST_BYTES: 413 REQUEST_TOO_LARGE before any operation."""
    async with open_api(tmp_path, max_request_bytes=2048) as api:
        response = await api.http.put(
            FILE,
            json=file_body(content="x" * 4096),
            headers=api.alice | {"If-None-Match": "*"},
        )
        absent = await api.http.get(FILE, headers=api.alice)

    assert response.status_code == 413
    assert response.json()["code"] == "REQUEST_TOO_LARGE"
    assert absent.status_code == 404


async def test_cors_is_off_by_default(tmp_path: Path) -> None:
    """No Access-Control-Allow-* header on a preflight or an ordinary request."""
    origin = {"Origin": "https://evil.example"}
    async with open_api(tmp_path) as api:
        preflight = await api.http.options(
            "/v1/index",
            headers=origin | {"Access-Control-Request-Method": "GET"},
        )
        ordinary = await api.http.get("/v1/index", headers=api.alice | origin)

    for response in (preflight, ordinary):
        assert not any(
            name.lower().startswith("access-control-") for name in response.headers
        )
    assert preflight.status_code in (404, 405)


MCP_LIST: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {},
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


async def test_mcp_refuses_hosts_and_origins_outside_its_allow_lists(
    tmp_path: Path,
) -> None:
    """DNS-rebinding protection: a foreign Host or Origin never reaches a tool."""
    async with open_api(tmp_path) as api:
        loopback = api.alice | MCP_ACCEPT | {"Host": "127.0.0.1:8000"}
        allowed = await api.http.post("/mcp", json=MCP_LIST, headers=loopback)
        foreign_host = await api.http.post(
            "/mcp", json=MCP_LIST, headers=loopback | {"Host": "evil.example"}
        )
        foreign_origin = await api.http.post(
            "/mcp",
            json=MCP_LIST,
            headers=loopback | {"Origin": "http://evil.example"},
        )

    assert allowed.status_code == 200, allowed.text
    assert foreign_host.status_code in (400, 403, 421)
    assert foreign_origin.status_code in (400, 403)
    for refused in (foreign_host, foreign_origin):
        assert "get_memory_index" not in refused.text


async def test_configured_mcp_hosts_replace_the_loopback_default(
    tmp_path: Path,
) -> None:
    """WENCHANG_ALLOWED_HOSTS admits exactly the listed hosts."""
    async with open_api(tmp_path, allowed_hosts=("memory.example.com",)) as api:
        headers = api.alice | MCP_ACCEPT
        listed = await api.http.post(
            "/mcp", json=MCP_LIST, headers=headers | {"Host": "memory.example.com"}
        )
        loopback = await api.http.post(
            "/mcp", json=MCP_LIST, headers=headers | {"Host": "127.0.0.1:8000"}
        )

    assert listed.status_code == 200, listed.text
    assert loopback.status_code in (400, 403, 421)


async def test_mcp_bodies_have_the_same_ceiling_as_the_api(tmp_path: Path) -> None:
    """A declared or a streamed body over the limit is a 413, never buffered."""
    huge = {**MCP_LIST, "params": {"padding": "x" * 8192}}

    async def streamed() -> AsyncIterator[bytes]:
        for _ in range(64):
            yield b"x" * 1024

    async with open_api(tmp_path, max_request_bytes=4096) as api:
        headers = api.alice | MCP_ACCEPT | {"Host": "127.0.0.1:8000"}
        declared = await api.http.post("/mcp", json=huge, headers=headers)
        chunked = await api.http.post(
            "/mcp",
            content=streamed(),
            headers=headers | {"Content-Type": "application/json"},
        )
        small = await api.http.post("/mcp", json=MCP_LIST, headers=headers)

    assert declared.status_code == 413
    assert declared.json()["code"] == "REQUEST_TOO_LARGE"
    assert chunked.status_code == 413
    assert small.status_code == 200


@pytest.mark.parametrize("media", ["text/plain", None])
async def test_mcp_refuses_a_body_that_is_not_json_as_415(
    tmp_path: Path, media: str | None
) -> None:
    """A POST to /mcp not sent as JSON is UNSUPPORTED_MEDIA_TYPE, as on /v1."""
    async with open_api(tmp_path) as api:
        headers = api.alice | MCP_ACCEPT | {"Host": "127.0.0.1:8000"}
        request = api.http.build_request(
            "POST", "/mcp", content=json.dumps(MCP_WRITE).encode(), headers=headers
        )
        if media is not None:  # bytes alone carry no content-type
            request.headers["content-type"] = media
        refused = await api.http.send(request)
        missing = await api.http.get(FILE, headers=api.alice)

    assert refused.status_code == 415, refused.text
    envelope = refused.json()
    assert envelope["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert envelope["details"]["category"] == "permanent"
    assert envelope["details"]["expected"] == "application/json"
    assert envelope["details"]["actual"] == media
    assert missing.status_code == 404


async def test_a_retry_after_the_file_moved_on_gets_the_file_as_it_stands(
    tmp_path: Path,
) -> None:
    """Records keep a receipt, not content: a late retry re-reads the file."""
    async with open_api(tmp_path) as api:
        created = (await put_new(api, api.alice)).json()
        line_headers = api.alice | if_match(created["version"])
        line_headers |= {"Idempotency-Key": "late"}
        first = await api.http.post(f"{FILE}/lines", json=LINE, headers=line_headers)
        moved = await api.http.post(
            f"{FILE}/lines",
            json={"line": "- [stated] Hot"},
            headers=api.alice | if_match(first.json()["version"]),
        )
        retry = await api.http.post(f"{FILE}/lines", json=LINE, headers=line_headers)

    assert (first.status_code, moved.status_code, retry.status_code) == (200,) * 3
    assert retry.json() == moved.json()
    assert retry.json()["content"].count(LINE["line"]) == 1
