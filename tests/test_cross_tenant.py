"""Cross-tenant matrix: another entity's names give no data and no existence oracle.

A victim holds files in every scope; an attacker whose grants name the same
scopes (but other entities), plus one scope the attacker lacks, calls every
operation on the victim's names, with the victim's versions and cursors, over
every surface: the use cases, the typed client over HTTP, raw HTTP and an MCP
session, on several storage adapters. Each answer must be exactly the answer
for a name nobody holds (the name itself aside), must carry nothing of the
victim's, and the victim's memory must be unchanged afterwards.
"""

import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
import pytest
from wenchang_client.errors import WenchangError

from app.features.memory.schemas import MemoryFile
from app.server.asgi import build_app
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.client_transport import client_transport
from tests.support.storage_adapters import storage_url
from tests.support.transport_conformance import SUITE_SETTINGS, Connect, Transport
from tests.support.transports import (
    TokenRegistry,
    mcp_transport,
    serve_in_thread,
    use_case_transport,
)

SCOPES = ("user", "org", "project", "team")
SECRET = "victim-secret-fact"
FACT = f"- [stated] {SECRET}\n"

type Operation = Callable[[Transport, str, str, str], Awaitable[object]]


def grants(run: str, *scopes: str) -> dict[str, Grant]:
    roles = {"user": "owner", "org": "owner", "project": "owner", "team": "member"}
    return {scope: Grant(f"{scope[0]}-{run}", roles[scope]) for scope in scopes}


def victim_and_attacker() -> tuple[Identity, Identity]:
    run = uuid.uuid4().hex[:10]
    victim = Identity(grants(f"v{run}", *SCOPES), label="victim")
    attacker = Identity(grants(f"a{run}", "user", "org", "team"), label="attacker")
    return victim, attacker


OPERATIONS: dict[str, Operation] = {
    "read_file": lambda t, scope, name, version: t.read_file(scope, "notes", name),
    "write_file": lambda t, scope, name, version: t.write_file(
        scope,
        "notes",
        name,
        content="- [stated] overwritten\n",
        description="",
        aliases=[],
        expected_version=version,
    ),
    "append_line": lambda t, scope, name, version: t.append_line(
        scope, "notes", name, line="- [stated] injected", expected_version=version
    ),
    "replace_fact": lambda t, scope, name, version: t.replace_fact(
        scope,
        "notes",
        name,
        old_string=SECRET,
        new_string="replaced",
        expected_version=version,
    ),
    "delete_file": lambda t, scope, name, version: t.delete_file(
        scope, "notes", name, expected_version=version
    ),
}


def create(transport: Transport, scope: str, name: str) -> Awaitable[MemoryFile]:
    return transport.write_file(
        scope,
        "notes",
        name,
        content="- [stated] mine\n",
        description="",
        aliases=[],
        expected_version=None,
    )


async def outcome(call: Awaitable[object], name: str) -> tuple[str, Any]:
    """The result or error, with ``name`` blanked and fresh values dropped."""
    try:
        result = await call
    except WenchangError as exc:
        details = {k: v for k, v in exc.details.items() if k != "message"}
        text = repr((type(exc).__name__, details, exc.message))
        return "error", text.replace(name, "<name>")
    if isinstance(result, MemoryFile):
        kept = result.model_dump(exclude={"version", "last_updated", "name"})
        return "file", kept
    return "result", repr(result).replace(name, "<name>")


async def victim_state(victim: Transport) -> list[Any]:
    index = await victim.get_memory_index()
    files = [
        await victim.read_file(entry.scope, entry.area, entry.name)
        for entry in index.entries
    ]
    return [index, *files]


class CrossTenantMatrix:
    """Every case; a subclass supplies ``connect`` (as the conformance suite does)."""

    @pytest.fixture
    async def parties(
        self, connect: Connect
    ) -> AsyncGenerator[tuple[Transport, Transport, dict[str, MemoryFile]]]:
        victim_identity, attacker_identity = victim_and_attacker()
        async with (
            connect(victim_identity) as victim,
            connect(attacker_identity) as attacker,
        ):
            held: dict[str, MemoryFile] = {}
            for scope in SCOPES:
                if scope == "team":
                    continue  # role-gated: members (the victim too) cannot write it
                for name in ("held", "held-2", "held-3"):
                    held[f"{scope}/{name}"] = await victim.write_file(
                        scope,
                        "notes",
                        name,
                        content=FACT,
                        description=SECRET,
                        aliases=[SECRET],
                        expected_version=None,
                    )
            yield victim, attacker, held

    @pytest.mark.parametrize("operation", sorted(OPERATIONS))
    async def test_an_operation_on_a_victims_name_answers_as_for_no_one(
        self,
        parties: tuple[Transport, Transport, dict[str, MemoryFile]],
        operation: str,
    ) -> None:
        """Same answer as for an unheld name, in every scope; nothing leaks."""
        victim, attacker, held = parties
        before = await victim_state(victim)
        call = OPERATIONS[operation]

        for scope in (*SCOPES[:3], "team"):
            version = held.get(f"{scope}/held", held["user/held"]).version
            on_held = await outcome(call(attacker, scope, "held", version), "held")
            on_nobody = await outcome(
                call(attacker, scope, "nobody", version), "nobody"
            )

            assert on_held == on_nobody, (scope, on_held, on_nobody)
            assert on_held[0] == "error", (scope, on_held)
            assert SECRET not in repr(on_held)
        assert await victim_state(victim) == before

    async def test_creating_a_victims_name_creates_the_attackers_own_file(
        self, parties: tuple[Transport, Transport, dict[str, MemoryFile]]
    ) -> None:
        """A create succeeds exactly as for an unheld name, beside the victim's file."""
        victim, attacker, _ = parties
        before = await victim_state(victim)

        for scope in ("user", "org"):
            on_held = await outcome(create(attacker, scope, "held-2"), "held-2")
            on_nobody = await outcome(create(attacker, scope, "fresh"), "fresh")

            assert on_held == on_nobody
            assert on_held[0] == "file"
        assert await victim_state(victim) == before

    async def test_listings_and_the_index_hold_only_the_callers_files(
        self, parties: tuple[Transport, Transport, dict[str, MemoryFile]]
    ) -> None:
        """No victim entry in any listing, page or index of the attacker."""
        _, attacker, _ = parties

        index = await attacker.get_memory_index()
        pages = [await attacker.list_prefix(scope) for scope in ("user", "org", "team")]
        pages += [
            await attacker.list_prefix(scope, "notes") for scope in ("user", "org")
        ]

        assert index.entries == [] and index.capped == []
        assert all(page.entries == [] and page.next_cursor is None for page in pages)

    async def test_a_victims_cursor_is_refused_like_a_forged_one(
        self, parties: tuple[Transport, Transport, dict[str, MemoryFile]]
    ) -> None:
        """A cursor issued to the victim proves nothing to anyone else."""
        victim, attacker, _ = parties
        issued = (await victim.list_prefix("user")).next_cursor
        assert issued is not None

        genuine = await outcome(attacker.list_prefix("user", cursor=issued), "-")
        forged = await outcome(attacker.list_prefix("user", cursor="AAAA.BBBB"), "-")
        unheld_scope = await outcome(attacker.list_prefix("project"), "-")

        assert genuine == forged
        assert "InvalidArgumentError" in genuine[1] and "cursor" in genuine[1]
        assert "InvalidArgumentError" in unheld_scope[1]
        assert SECRET not in repr((genuine, unheld_scope))


ADAPTERS = ("memory", "file")


@pytest.fixture(scope="module", params=ADAPTERS)
def settings(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Settings:
    kind: str = request.param
    root = tmp_path_factory.mktemp(f"tenants-{kind}")
    return Settings(
        storage=storage_url(kind, root),
        tokens_file=str(root / "tokens.json"),
        cursor_secret="cross-tenant-cursor-secret",
        rate_limit=0,
        audit="memory",
        **SUITE_SETTINGS,
    )


class Server:
    def __init__(self, base_url: str, tokens: TokenRegistry) -> None:
        self.base_url = base_url
        self.tokens = tokens


@pytest.fixture(scope="module")
def server(settings: Settings) -> Iterator[Server]:
    tokens = TokenRegistry()
    with serve_in_thread(build_app(settings, resolver=tokens, on_call=())) as url:
        yield Server(url, tokens)


class TestUseCases(CrossTenantMatrix):
    @pytest.fixture
    async def connect(self, settings: Settings) -> AsyncGenerator[Connect]:
        async with create_lifespan(settings)() as runtime:
            yield lambda identity: use_case_transport(runtime.context, identity)


class TestHttpClient(CrossTenantMatrix):
    @pytest.fixture
    def connect(self, server: Server) -> Connect:
        def connect(
            identity: Identity | None,
        ) -> AbstractAsyncContextManager[Transport]:
            assert identity is not None
            return client_transport(server.base_url, server.tokens.issue(identity))

        return connect


class TestMcpSession(CrossTenantMatrix):
    @pytest.fixture
    def connect(self, server: Server) -> Connect:
        def connect(
            identity: Identity | None,
        ) -> AbstractAsyncContextManager[Transport]:
            assert identity is not None
            return mcp_transport(server.base_url, server.tokens.issue(identity))

        return connect


RAW_REQUESTS: dict[str, tuple[str, str, dict[str, Any] | None, dict[str, str]]] = {
    "GET": ("GET", "", None, {}),
    "PUT": (
        "PUT",
        "",
        {"content": "x", "description": "", "aliases": []},
        {"If-Match": '"{version}"'},
    ),
    "POST lines": (
        "POST",
        "/lines",
        {"line": "- [stated] x"},
        {"If-Match": '"{version}"'},
    ),
    "POST replace": (
        "POST",
        "/replace",
        {"old_string": SECRET, "new_string": "x"},
        {"If-Match": '"{version}"'},
    ),
    "DELETE": ("DELETE", "", None, {"If-Match": '"{version}"'}),
}
UNSTABLE_HEADERS = {"date", "x-request-id", "content-length"}


def raw_outcome(response: httpx.Response, name: str) -> tuple[int, dict[str, str], str]:
    headers = {
        key: value
        for key, value in response.headers.items()
        if key not in UNSTABLE_HEADERS
    }
    body: dict[str, Any] = response.json() if response.content else {}
    body.pop("request_id", None)
    return response.status_code, headers, repr(body).replace(name, "<name>")


@pytest.mark.parametrize("request_name", sorted(RAW_REQUESTS))
async def test_raw_http_answers_identically_for_a_victims_name(
    server: Server, request_name: str
) -> None:
    """Status, headers (no ETag) and body are the same as for an unheld name."""
    victim_identity, attacker_identity = victim_and_attacker()
    victim = {"Authorization": f"Bearer {server.tokens.issue(victim_identity)}"}
    attacker = {"Authorization": f"Bearer {server.tokens.issue(attacker_identity)}"}
    method, suffix, body, guard = RAW_REQUESTS[request_name]
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        created = await http.put(
            "/v1/files/user/notes/held",
            json={"content": FACT, "description": SECRET, "aliases": []},
            headers=victim | {"If-None-Match": "*"},
        )
        version = created.json()["version"]
        headers = {k: v.format(version=version) for k, v in guard.items()}
        answers = [
            raw_outcome(
                await http.request(
                    method,
                    f"/v1/files/user/notes/{name}{suffix}",
                    json=body,
                    headers=attacker | headers,
                ),
                name,
            )
            for name in ("held", "nobody")
        ]
        still = await http.get("/v1/files/user/notes/held", headers=victim)

    assert answers[0] == answers[1]
    assert 400 <= answers[0][0] < 500
    assert "etag" not in answers[0][1]
    assert SECRET not in repr(answers[0])
    assert still.json()["version"] == version


async def test_the_audit_log_shows_no_one_the_victims_calls(server: Server) -> None:
    """The attacker's /v1/audit holds only its own calls; the victim's, none of its."""
    victim_identity, attacker_identity = victim_and_attacker()
    victim = {"Authorization": f"Bearer {server.tokens.issue(victim_identity)}"}
    attacker = {"Authorization": f"Bearer {server.tokens.issue(attacker_identity)}"}
    path = "/v1/files/user/notes/held"
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        created = await http.put(
            path,
            json={"content": FACT, "description": SECRET, "aliases": []},
            headers=victim | {"If-None-Match": "*"},
        )
        await http.get(path, headers=victim)
        await http.get("/v1/index", headers=victim)
        await http.get(path, headers=attacker)
        victim_version = created.json()["version"]

        mine = await http.get("/v1/audit", headers=attacker)
        trail = await http.get(
            "/v1/audit?scope=user&area=notes&name=held", headers=attacker
        )
        theirs = await http.get("/v1/audit", headers=victim)
        unheld = await http.get("/v1/audit?scope=project", headers=attacker)
        nobody = await http.get("/v1/audit?scope=nowhere", headers=attacker)

    assert [e["operation"] for e in mine.json()["events"]] == ["read_file"]
    assert [e["outcome"] for e in trail.json()["events"]] == ["MEMORY_NOT_FOUND"]
    assert "attacker" not in repr(theirs.json())
    for answer in (mine, trail):
        assert SECRET not in answer.text and "victim" not in answer.text
        assert victim_version not in [e["version"] for e in answer.json()["events"]]
    assert (unheld.status_code, nobody.status_code) == (422, 422)
    unheld_details = unheld.json()["details"]
    nobody_details = nobody.json()["details"]
    assert unheld_details["argument"] == nobody_details["argument"] == "scope"
