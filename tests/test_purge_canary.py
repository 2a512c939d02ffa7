"""A purge erases every copy: written through every surface, scanned everywhere.

A canary entity gets every kind of write — create, append, replace, whole
replace, delete, restore, import — through HTTP (with ``Idempotency-Key``s that
hold the canary), MCP,
the typed client and a task on a running server, and reads that keep what they
served (index, search, history, audit); then ``memory.purge`` runs as a task
in its own runtime, the way the CLI does.
Afterwards the server's index is empty at once, and every byte each data store
keeps is scanned for the canary: 0 hits; the shared request store (SQLite or
Redis), which held a record of each key before, holds none of them, and a key
used before the purge runs afresh after it.

A feature that keeps data of its own adds one line to DATA_STORES: a function
from the running ``Setup`` to every byte that store keeps.
"""

import os
import sqlite3
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import cast
from urllib.parse import quote

import httpx
import pytest
from redis.asyncio import Redis
from wenchang_client import AsyncMemoryClient

from app.features.memory.schemas import (
    ExportMemory,
    ImportedFile,
    ImportMemory,
    PurgeMemory,
)
from app.features.memory.use_cases.export_memory import export_memory
from app.features.memory.use_cases.import_memory import import_memory
from app.features.memory.use_cases.purge_memory import purge_memory
from app.infra.redis.idempotency_store import KEY_PREFIX as RECORD_PREFIX
from app.server.asgi import build_app
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.audited_app import stage_event, staged_count, staged_write
from tests.support.gcs_emulator import TEST_BUCKET
from tests.support.loopback import LOOPBACK
from tests.support.redis_server import RedisServer
from tests.support.storage_adapters import storage_url
from tests.support.transports import TokenRegistry, mcp_transport, serve_in_thread

CANARY = f"canary{uuid.uuid4().hex[:12]}"
ENTITY = f"e-{uuid.uuid4().hex[:8]}"
MEDIA = {"alt": "media"}
DUMP_EVERY_KEY = """
local found = {}
for _, key in ipairs(redis.call('KEYS', '*')) do
  table.insert(found, key)
  table.insert(found, redis.call('DUMP', key))
end
return found
"""

DUMP_RECORDS = """
local found = {}
for _, key in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
  table.insert(found, key)
  for _, part in ipairs(redis.call('HGETALL', key)) do table.insert(found, part) end
end
return found
"""


@dataclass(frozen=True, slots=True)
class Setup:
    root: Path
    settings: Settings
    redis: RedisServer | None
    gcs_host: str | None


async def files_under_root(setup: Setup) -> bytes:
    """Every name and byte on disk: SQLite database, WAL, SHM, file storage,
    token file, and whatever a store keeps next to them."""
    found = b""
    for directory, _, names in os.walk(setup.root):
        for name in names:
            path = Path(directory, name)
            found += str(path).encode() + path.read_bytes()
    return found


async def gcs_objects(setup: Setup) -> bytes:
    """Every object (current and noncurrent) under the test's prefix: names,
    bodies and metadata."""
    if setup.gcs_host is None:
        return b""
    prefix = setup.settings.storage.split("/", 3)[3].split("?")[0]
    listing = f"{setup.gcs_host}/storage/v1/b/{TEST_BUCKET}/o"
    async with httpx.AsyncClient() as http:
        found = await http.get(listing, params={"versions": "true", "prefix": prefix})
        found.raise_for_status()
        dump = found.content
        for item in found.json().get("items", []):
            name = quote(str(item["name"]), safe="")
            params = MEDIA | {"generation": str(item["generation"])}
            dump += (await http.get(f"{listing}/{name}", params=params)).content
    return dump


async def redis_keys_and_values(setup: Setup) -> bytes:
    """Every Redis key and value: the index cache and the request store."""
    if setup.redis is None:
        return b""
    client = Redis(host=LOOPBACK, port=setup.redis.port)
    try:
        dump = client.register_script(DUMP_EVERY_KEY)
        return b"".join(cast(list[bytes], await dump()))
    finally:
        await client.aclose()


async def request_records(setup: Setup) -> bytes:
    """Every Idempotency-Key record of the shared request store, whole: in the
    SQLite database or under Redis's record prefix (an in-process store dies
    with its server)."""
    url = setup.settings.request_store_url
    if url.startswith("sqlite:///"):
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
            rows = db.execute("SELECT * FROM idempotency_records").fetchall()
        return repr(rows).encode()
    if setup.redis is None:
        return b""
    client = Redis(host=LOOPBACK, port=setup.redis.port)
    try:
        dump = client.register_script(DUMP_RECORDS)
        return b"".join(cast(list[bytes], await dump(args=[RECORD_PREFIX])))
    finally:
        await client.aclose()


def keeps_shared_records(setup: Setup) -> bool:
    return setup.settings.request_store_url.startswith(("sqlite:", "redis:"))


DATA_STORES: list[Callable[[Setup], Awaitable[bytes]]] = [
    files_under_root,
    gcs_objects,
    redis_keys_and_values,
    request_records,
]


def settings_for(setup_root: Path, storage: str, redis: RedisServer | None) -> Settings:
    settings = Settings(
        storage=storage,
        tokens_file=str(setup_root / "tokens.json"),
        cursor_secret="purge-canary-cursor-secret",
    )
    if not storage.startswith("sqlite"):
        # Audit events kept as JSON lines under the root, so they are scanned.
        audit = f"file://{setup_root / 'audit'}"
        settings = settings.model_copy(update={"audit": audit})
    if redis is None:
        return settings
    # Both shared stores on Redis: the index cache and the request store.
    return settings.model_copy(
        update={"index_cache": redis.url, "request_store": redis.url}
    )


@pytest.fixture(
    params=[
        ("sqlite", "memory"),
        ("file", "memory"),
        ("gcs", "memory"),
        ("sqlite", "redis"),
        ("file", "redis"),
        ("gcs", "redis"),
    ],
    ids=lambda p: "-".join(p),
)
async def setup(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncGenerator[Setup]:
    backend, cache = request.param
    gcs_host = None
    if backend == "gcs":
        gcs_host = request.getfixturevalue("gcs_emulator").url
    redis = request.getfixturevalue("redis_server") if cache == "redis" else None
    root = tmp_path / "data"
    root.mkdir()
    url = storage_url(backend, root)
    yield Setup(root, settings_for(root, url, redis), redis, gcs_host)


def canary_body(i: int) -> dict[str, str | list[str]]:
    return {
        "content": f"- [stated] {CANARY} secret {i}\n",
        "description": f"{CANARY} description",
        "aliases": [f"{CANARY}-alias"],
    }


DESCRIPTION, ALIASES = f"{CANARY} description", [f"{CANARY}-alias"]


AREA = f"{CANARY}-area"


async def write_canary_over_http(base: str, token: str) -> None:
    """Two files over HTTP with Idempotency-Key (each create retried): appended
    to, then one span-replaced and the other replaced whole; a search read."""
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=auth) as http:
        for i in range(2):
            path = f"/v1/files/user/{AREA}/{CANARY}-http-{i}"
            keyed = {"If-None-Match": "*", "Idempotency-Key": f"{CANARY}-k{i}"}
            created = await http.put(path, json=canary_body(i), headers=keyed)
            retried = await http.put(path, json=canary_body(i), headers=keyed)
            # The retry is answered from the record.
            assert created.status_code == retried.status_code == 201, created.text
            line = {"line": f"- [stated] {CANARY} line"}
            version = {"If-Match": f'"{created.json()["version"]}"'}
            keyed_line = version | {"Idempotency-Key": f"{CANARY}-l{i}"}
            appended = await http.post(f"{path}/lines", json=line, headers=keyed_line)
            assert appended.status_code == 200, appended.text
            moved = {"If-Match": f'"{appended.json()["version"]}"'}
            moved |= {"Idempotency-Key": f"{CANARY}-e{i}"}
            if i == 0:
                span = {"old_string": "secret", "new_string": "plain"}
                edit = http.post(f"{path}/replace", json=span, headers=moved)
            else:
                edit = http.put(path, json=canary_body(9), headers=moved)
            assert (await edit).status_code == 200
        found = await http.get("/v1/search", params={"q": CANARY})
        assert found.status_code == 200 and found.json()["hits"], found.text
        hook = {"url": f"https://{CANARY}.example.com/hook", "description": CANARY}
        added = await http.post("/v1/webhooks/user", json=hook)
        assert added.status_code == 201, added.text


async def write_canary_over_mcp(base: str, token: str) -> None:
    """One file over MCP appended to and span-replaced; another created and
    deleted (its history and tombstone remain until the purge)."""
    async with mcp_transport(base, token) as mcp:
        made = await mcp.write_file(
            "user",
            AREA,
            f"{CANARY}-mcp",
            content=f"- [stated] {CANARY} secret mcp\n",
            description=DESCRIPTION,
            aliases=ALIASES,
            expected_version=None,
        )
        appended = await mcp.append_line(
            "user",
            AREA,
            f"{CANARY}-mcp",
            line=f"- [stated] {CANARY} mcp",
            expected_version=made.version,
        )
        await mcp.replace_fact(
            "user",
            AREA,
            f"{CANARY}-mcp",
            old_string="secret",
            new_string="plain",
            expected_version=appended.version,
        )
        gone = await mcp.write_file(
            "user",
            AREA,
            f"{CANARY}-gone",
            content=f"- [stated] {CANARY} gone\n",
            description=DESCRIPTION,
            aliases=ALIASES,
            expected_version=None,
        )
        await mcp.delete_file(
            "user", AREA, f"{CANARY}-gone", expected_version=gone.version
        )
        assert len((await mcp.get_memory_index()).entries) == 3


async def write_canary_with_the_client(base: str, token: str) -> None:
    """One file through the typed client: created, appended to, deleted and
    restored from its history; searched, its history and audit trail read."""
    name = f"{CANARY}-client"
    async with AsyncMemoryClient(base, token=token) as client:
        made = await client.write_file(
            "user",
            AREA,
            name,
            content=f"- [stated] {CANARY} secret client\n",
            description=DESCRIPTION,
            aliases=ALIASES,
            expected_version=None,
        )
        appended = await client.append_line(
            "user",
            AREA,
            name,
            line=f"- [stated] {CANARY} client",
            expected_version=made.version,
        )
        await client.delete_file("user", AREA, name, expected_version=appended.version)
        await client.restore_version(
            "user", AREA, name, version=made.version, expected_version=None
        )
        assert (await client.search_memory(CANARY)).hits
        assert (await client.list_versions("user", AREA, name)).entries
        assert (await client.read_audit("user", area=AREA)).events
        assert len((await client.get_memory_index()).entries) == 4


def stage_unmoved_event(setup: Setup) -> None:
    """On SQLite, an audit event a write staged in a process that died before
    moving it to the indexed table: the purge must erase it too."""
    storage = setup.settings.storage
    if not storage.startswith("sqlite:///"):
        return
    database = Path(storage.removeprefix("sqlite:///"))
    staged = staged_write(f"{CANARY}-staged", entity_id=ENTITY, area=AREA)
    stage_event(database, staged, "v1")
    assert staged_count(database) >= 1


async def import_canary(settings: Settings) -> None:
    """One file imported by an operator task, then the entity exported."""
    imported = ImportedFile(
        area=AREA,
        name=f"{CANARY}-task",
        content=f"- [stated] {CANARY} secret task\n",
        description=DESCRIPTION,
        aliases=ALIASES,
    )
    async with create_lifespan(settings, surface="task")() as runtime:
        report = await import_memory(
            ImportMemory(scope="user", entity_id=ENTITY, files=[imported]),
            runtime.context,
        )
        assert len(report.created) == 1
        exported = await export_memory(
            ExportMemory(scope="user", entity_id=ENTITY), runtime.context
        )
        assert len(exported.files) == 5


async def write_canary(setup: Setup, base: str, token: str) -> None:
    """Every kind of write on every surface, and reads that keep what they
    served (search, history, audit, the index)."""
    await write_canary_over_http(base, token)
    await write_canary_over_mcp(base, token)
    await write_canary_with_the_client(base, token)
    await import_canary(setup.settings)


async def test_a_purge_leaves_no_byte_of_the_canary_anywhere(setup: Setup) -> None:
    tokens = TokenRegistry()
    token = tokens.issue(
        Identity(grants={"user": Grant(ENTITY, "owner")}, label="purge-tests")
    )
    with serve_in_thread(build_app(setup.settings, resolver=tokens)) as base:
        await write_canary(setup, base, token)
        stage_unmoved_event(setup)
        assert CANARY.encode() in await files_under_root(setup) + await gcs_objects(
            setup
        )
        if keeps_shared_records(setup):
            # Each keyed write left its record, its key holding the canary.
            assert (await request_records(setup)).count(CANARY.encode()) >= 6

        async with create_lifespan(setup.settings, surface="task")() as runtime:
            report = await purge_memory(
                PurgeMemory(scope="user", entity_id=ENTITY, dry_run=False),
                runtime.context,
            )
        assert report.objects == 5

        async with AsyncMemoryClient(base, token=token) as client:
            # The running server's cache missed the purge, yet its index is empty.
            assert (await client.get_memory_index()).entries == []

    hits = {
        scan.__name__: (await scan(setup)).count(CANARY.encode())
        for scan in DATA_STORES
    }
    assert hits == dict.fromkeys(hits, 0)
    if keeps_shared_records(setup):
        await a_key_used_before_runs_afresh(setup, tokens, token)


async def a_key_used_before_runs_afresh(
    setup: Setup, tokens: TokenRegistry, token: str
) -> None:
    """The first keyed create, sent again after the purge: a new create (201,
    the file readable), never the purged file's recorded answer."""
    path = f"/v1/files/user/{AREA}/{CANARY}-http-0"
    keyed = {"If-None-Match": "*", "Idempotency-Key": f"{CANARY}-k0"}
    auth = {"Authorization": f"Bearer {token}"}
    with serve_in_thread(build_app(setup.settings, resolver=tokens)) as base:
        async with httpx.AsyncClient(base_url=base, headers=auth) as http:
            again = await http.put(path, json=canary_body(0), headers=keyed)
            assert again.status_code == 201, again.text
            read = await http.get(path)
            assert read.status_code == 200 and CANARY in read.json()["content"]
            assert read.json()["version"] == again.json()["version"]
