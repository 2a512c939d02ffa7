"""A sweep erases every copy of an expired file: written through every surface,
scanned everywhere (the purge canary's stores, on each backend and request store).

A canary entity gets files whose content, description and aliases (and the
Idempotency-Keys of their keyed writes) hold the canary: written, appended to
and replaced over HTTP, MCP and the typed client, each finally rewritten whole
with an expiry in the past, so older versions with the canary sit in its
history. One lasting file without the canary stays beside them. Then
``memory.sweep_expired`` runs as a task in its own runtime; afterwards no data
store holds the canary, and the lasting file is all the owner's index shows,
expired files included. File names are not the canary: a sweep keeps the audit
trail and the change feed, which name files (never their content).

Only the records of the swept files go: with a shared request store, a keyed
retry of the lasting file's create still answers its first result, while a
keyed retry of an expired file's create runs afresh.
"""

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from wenchang_client import AsyncMemoryClient

from app.features.memory.schemas import SweepExpired
from app.features.memory.use_cases.sweep_expired import sweep_expired
from app.server.asgi import build_app
from app.server.runtime import create_lifespan
from app.shared.identity import Grant, Identity
from tests.mcp_support import http_session, ok
from tests.support.transports import TokenRegistry, serve_in_thread
from tests.test_purge_canary import (
    DATA_STORES,
    Setup,
    files_under_root,
    gcs_objects,
    keeps_shared_records,
    request_records,
    setup,
)

__all__ = ["setup"]  # the purge canary's fixture: every backend and request store

CANARY = f"sweepcanary{uuid.uuid4().hex[:12]}"
ENTITY = f"e-{uuid.uuid4().hex[:8]}"
PAST = "2020-01-01T00:00:00Z"
AREA = "notes"
LASTING_KEY = f"lasting-{uuid.uuid4().hex[:12]}"
LASTING: dict[str, Any] = {
    "content": "- [stated] kept\n",
    "description": "",
    "aliases": [],
}


def body(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "content": f"- [stated] {text}\n",
        "description": f"{CANARY} description",
        "aliases": [f"{CANARY}-alias"],
        **extra,
    }


async def expire_over_http(base: str, token: str) -> object:
    """A keyed create and append, then a keyed whole write that expires it;
    and the lasting file's keyed create (its answer), nothing of the canary."""
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=auth) as http:
        path = f"/v1/files/user/{AREA}/over-http"
        keyed = {"If-None-Match": "*", "Idempotency-Key": f"{CANARY}-k"}
        made = await http.put(path, json=body(f"{CANARY} secret"), headers=keyed)
        assert made.status_code == 201, made.text
        line = {"line": f"- [stated] {CANARY} line"}
        moved = {"If-Match": made.headers["ETag"], "Idempotency-Key": f"{CANARY}-l"}
        appended = await http.post(f"{path}/lines", json=line, headers=moved)
        assert appended.status_code == 200, appended.text
        last = {"If-Match": appended.headers["ETag"], "Idempotency-Key": f"{CANARY}-e"}
        expired = await http.put(
            path, json=body(f"{CANARY} last", expires_at=PAST), headers=last
        )
        assert expired.status_code == 200, expired.text
        kept = await create_lasting(http)
        assert kept.status_code == 201, kept.text
        return kept.json()


async def create_lasting(http: httpx.AsyncClient) -> httpx.Response:
    """The lasting file's keyed create (again: a retry)."""
    keyed = {"If-None-Match": "*", "Idempotency-Key": LASTING_KEY}
    path = f"/v1/files/user/{AREA}/lasting"
    return await http.put(path, json=LASTING, headers=keyed)


async def retry_after_the_sweep(base: str, token: str, lasting: object) -> None:
    """The lasting file's keyed create answers its first result; the expired
    file's keyed create (its record erased) runs afresh and creates it again."""
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=auth) as http:
        again = await create_lasting(http)
        assert (again.status_code, again.json()) == (201, lasting)
        keyed = {"If-None-Match": "*", "Idempotency-Key": f"{CANARY}-k"}
        path = f"/v1/files/user/{AREA}/over-http"
        fresh = await http.put(path, json=body(f"{CANARY} secret"), headers=keyed)
        assert fresh.status_code == 201, fresh.text


async def expire_over_mcp(base: str, token: str) -> None:
    where = {"scope": "user", "area": AREA, "name": "over-mcp"}
    async with http_session(base, token) as mcp:
        made = ok(
            await mcp.call_tool(
                "write_file", where | body(f"{CANARY} mcp") | {"expected_version": None}
            )
        )
        ok(
            await mcp.call_tool(
                "write_file",
                where
                | body(f"{CANARY} mcp last", expires_at=PAST)
                | {"expected_version": made["version"]},
            )
        )


async def expire_with_the_client(base: str, token: str) -> None:
    async with AsyncMemoryClient(base, token=token) as client:
        made = await client.write_file(
            "user",
            AREA,
            "with-client",
            content=f"- [stated] {CANARY} client\n",
            description=f"{CANARY} description",
            aliases=[f"{CANARY}-alias"],
            expected_version=None,
        )
        await client.write_file(
            "user",
            AREA,
            "with-client",
            content=f"- [stated] {CANARY} client last\n",
            description=f"{CANARY} description",
            aliases=[f"{CANARY}-alias"],
            expected_version=made.version,
            expires_at=datetime(2020, 1, 1, tzinfo=UTC),
        )
        assert (await client.search_memory(CANARY, include_expired=True)).hits


async def test_a_sweep_leaves_no_byte_of_an_expired_file_anywhere(
    setup: Setup,
) -> None:
    tokens = TokenRegistry()
    owner = Identity(grants={"user": Grant(ENTITY, "owner")}, label="sweep-tests")
    token = tokens.issue(owner)
    with serve_in_thread(build_app(setup.settings, resolver=tokens)) as base:
        lasting = await expire_over_http(base, token)
        await expire_over_mcp(base, token)
        await expire_with_the_client(base, token)
        stored = await files_under_root(setup) + await gcs_objects(setup)
        assert CANARY.encode() in stored
        if keeps_shared_records(setup):
            assert (await request_records(setup)).count(CANARY.encode()) >= 3

        async with create_lifespan(setup.settings, surface="task")() as runtime:
            request = SweepExpired(scope="user", entity_id=ENTITY, dry_run=False)
            report = await sweep_expired(request, runtime.context)
        assert sorted(f.name for f in report.files) == [
            "over-http",
            "over-mcp",
            "with-client",
        ]

        async with AsyncMemoryClient(base, token=token) as client:
            index = await client.get_memory_index(include_expired=True)
            assert [entry.name for entry in index.entries] == ["lasting"]

    hits = {
        scan.__name__: (await scan(setup)).count(CANARY.encode())
        for scan in DATA_STORES
    }
    assert hits == dict.fromkeys(hits, 0)
    if keeps_shared_records(setup):
        assert LASTING_KEY.encode() in await request_records(setup)
        with serve_in_thread(build_app(setup.settings, resolver=tokens)) as base:
            await retry_after_the_sweep(base, token, lasting)
