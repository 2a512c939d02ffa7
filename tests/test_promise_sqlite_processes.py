"""Two `wenchang serve` processes on one SQLite file keep search and retries exact.

Search (docs/search.md, "Consistency"): a file is found as soon as the write
that created or changed it returned, and never after its delete or purge
returned, whichever process answers, over HTTP and MCP alike — here while
other writers keep both processes busy, so writes share transactions and
several files wait to be indexed at once. Retries (docs/guarantees.md): copies
of one keyed append sent to both processes at once, and resent until answered,
apply exactly once. A purge run by the operator task leaves no search row of
the entity in the file.
"""

import asyncio
import itertools
import sqlite3
import subprocess
import sys
from collections.abc import AsyncGenerator, Generator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import parse_grants
from tests.support.server import ServerProcess, clean_env, running_servers

WRITERS = 8
ROUNDS = 3
APPENDERS = 12
MAX_ATTEMPTS = 400
AREA = "/v1/files/user/probe"
PURGE = '{"scope": "user", "entity_id": "alice", "dry_run": false}'
PURGE_ARGUMENTS = ("task", "run", "memory.purge", "--input", PURGE)
MCP_HEADERS = {"accept": "application/json, text/event-stream"}
REPOSITORY = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Pair:
    servers: tuple[ServerProcess, ServerProcess]
    token: str
    directory: Path
    settings: dict[str, str]


def settings_of(directory: Path) -> dict[str, str]:
    """One SQLite file and one token file under ``directory``, no rate limit."""
    files = {"STORAGE": f"sqlite:///{directory / 'shared.db'}", "RATE_LIMIT": "0"}
    files["TOKENS_FILE"] = str(directory / "tokens.json")
    return {f"WENCHANG_{name}": value for name, value in files.items()}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Generator[Pair]:
    """Two servers on a fresh database and one token file."""
    directory = tmp_path_factory.mktemp("processes")
    settings = settings_of(directory)
    alice = parse_grants(["user=alice:owner"])
    token, _ = create_token(Path(settings["WENCHANG_TOKENS_FILE"]), alice)
    with running_servers(2, directory, settings=settings) as servers:
        yield Pair((servers[0], servers[1]), token, directory, settings)


@pytest.fixture
async def clients(pair: Pair) -> AsyncGenerator[tuple[httpx.AsyncClient, ...]]:
    headers = {"Authorization": f"Bearer {pair.token}"}
    limits = httpx.Limits(max_connections=32)
    async with (
        httpx.AsyncClient(
            base_url=pair.servers[0].url, headers=headers, timeout=60, limits=limits
        ) as first,
        httpx.AsyncClient(
            base_url=pair.servers[1].url, headers=headers, timeout=60, limits=limits
        ) as second,
    ):
        yield first, second


async def found(http: httpx.AsyncClient, word: str) -> list[str]:
    """The names a search finds: over HTTP, and the MCP tool must agree."""
    answer = await http.get("/v1/search", params={"q": word, "limit": 50})
    assert answer.status_code == 200, answer.text
    names = [hit["name"] for hit in answer.json()["hits"]]
    assert await found_by_mcp(http, word) == names, "MCP and HTTP disagree"
    return names


async def found_by_mcp(http: httpx.AsyncClient, word: str) -> list[str]:
    call = {"name": "search_memory", "arguments": {"query": word, "limit": 50}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    answer = await http.post("/mcp", json=message, headers=MCP_HEADERS)
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert not result.get("isError"), result
    hits = result["structuredContent"]["result"]["hits"]
    return [hit["name"] for hit in hits]


def word(kind: str, writer: int, round_: int) -> str:
    """One token of letters only, found by no other file."""
    letters = "abcdefghij"
    return f"zq{kind}{letters[writer]}{letters[round_]}xk"


async def write_search_delete(
    clients: tuple[httpx.AsyncClient, ...], writer: int
) -> None:
    """Create, change, delete, restore and delete one file again, searching
    through the other process after each step returns."""
    here, there = clients[writer % 2], clients[1 - writer % 2]
    path = f"{AREA}/w{writer}"
    for round_ in range(ROUNDS):
        old, new = word("old", writer, round_), word("new", writer, round_)
        body: dict[str, Any] = {
            "content": f"- [stated] {old}\n",
            "description": "",
            "aliases": [],
        }
        made = await here.put(path, json=body, headers={"If-None-Match": "*"})
        assert made.status_code == 201, made.text
        assert await found(there, old) == [f"w{writer}"], "created, not found"

        changed = await there.post(
            f"{path}/replace",
            json={"old_string": old, "new_string": new},
            headers={"If-Match": made.headers["ETag"]},
        )
        assert changed.status_code == 200, changed.text
        assert await found(here, old) == [], "found by a word its change removed"
        assert await found(here, new) == [f"w{writer}"], "changed, not found"

        gone = await here.delete(path, headers={"If-Match": changed.headers["ETag"]})
        assert gone.status_code == 204, gone.text
        for http in clients:
            assert await found(http, new) == [], "found after its delete returned"

        restored = await there.post(
            f"{path}/restore",
            json={"version": made.json()["version"]},
            headers={"If-None-Match": "*"},
        )
        assert restored.status_code == 201, restored.text
        assert await found(here, old) == [f"w{writer}"], "restored, not found"
        purged = await there.delete(
            path, headers={"If-Match": restored.headers["ETag"]}
        )
        assert purged.status_code == 204, purged.text
        assert await found(here, old) == [], "found after its delete returned"


async def test_search_across_two_processes_is_current_after_each_write(
    clients: tuple[httpx.AsyncClient, ...],
) -> None:
    await asyncio.gather(*(write_search_delete(clients, n) for n in range(WRITERS)))


async def keyed_append(
    clients: tuple[httpx.AsyncClient, ...], path: str, line: str, key: str
) -> None:
    """Send two copies of one keyed append at once, one to each process, until
    one is answered; then resend it once more with the key."""
    version = (await clients[0].get(path)).json()["version"]
    for _ in range(MAX_ATTEMPTS):
        headers = {"If-Match": f'"{version}"', "Idempotency-Key": key}
        answers = await asyncio.gather(
            *(
                http.post(f"{path}/lines", json={"line": line}, headers=headers)
                for http in clients
            )
        )
        codes = sorted(answer.status_code for answer in answers)
        if 200 in codes:
            # A replay answers the file as it stands now: the check that nothing
            # applied twice is the content, at the end.
            again = await clients[1].post(
                f"{path}/lines", json={"line": line}, headers=headers
            )
            assert again.status_code == 200, again.text
            return
        assert set(codes) <= {409, 412}, [a.text for a in answers]
        conflict = [a.json() for a in answers if a.status_code == 412]
        if conflict:
            version = conflict[0]["details"]["version"]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no answer in {MAX_ATTEMPTS} attempts")


async def every_version(http: httpx.AsyncClient, path: str) -> list[Any]:
    entries: list[Any] = []
    cursor: str | None = None
    while True:
        params = {"cursor": cursor} if cursor else {}
        page = await http.get(f"{path}/versions", params=params)
        assert page.status_code == 200, page.text
        entries += page.json()["entries"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return entries


async def test_keyed_appends_sent_twice_to_two_processes_land_once(
    clients: tuple[httpx.AsyncClient, ...],
) -> None:
    path = f"{AREA}/ledger"
    made = await clients[0].put(
        path,
        json={"content": "", "description": "", "aliases": []},
        headers={"If-None-Match": "*"},
    )
    assert made.status_code == 201, made.text
    lines = [f"- [stated] entry {n}" for n in range(APPENDERS)]

    await asyncio.gather(
        *(
            keyed_append(clients, path, line, f"ledger-{n}")
            for n, line in enumerate(lines)
        )
    )
    stored = (await clients[1].get(path)).json()
    history = await every_version(clients[0], path)

    assert sorted(stored["content"].splitlines()) == sorted(lines)  # each once
    assert len(history) == APPENDERS + 1  # one version each


def search_rows_of(database: Path, prefix: str) -> dict[str, int]:
    """Rows under ``prefix`` in every search table of the file (by its key)."""
    with closing(sqlite3.connect(database)) as db:
        tables = [
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name LIKE 'search%'"
            )
        ]
        counts: dict[str, int] = {}
        for table in tables:
            columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            if "key" in columns:
                sql = f"SELECT count(*) FROM {table} WHERE key >= ? AND key < ?"
                counts[table] = db.execute(sql, (prefix, prefix + "\uffff")).fetchone()[
                    0
                ]
    assert counts, "no search table holds keys: this test no longer looks anywhere"
    return counts


async def test_a_purge_leaves_nothing_searchable_in_either_process(
    pair: Pair, clients: tuple[httpx.AsyncClient, ...]
) -> None:
    words = [f"zqpurge{letter}xk" for letter in "abcdef"]
    for n, (token, http) in enumerate(zip(words, itertools.cycle(clients))):
        body: dict[str, Any] = {
            "content": f"- [stated] {token}\n",
            "description": token,
            "aliases": [],
        }
        made = await http.put(f"{AREA}/p{n}", json=body, headers={"If-None-Match": "*"})
        assert made.status_code == 201, made.text
    assert [await found(http, words[0]) for http in clients] == [["p0"], ["p0"]]
    # Changed after the last search: it waits to be indexed when the purge runs.
    current = await clients[1].get(f"{AREA}/p1")
    body: dict[str, Any] = {
        "content": "- [stated] zqpurgezzxk\n",
        "description": "",
        "aliases": [],
    }
    changed = await clients[1].put(
        f"{AREA}/p1", json=body, headers={"If-Match": current.headers["ETag"]}
    )
    assert changed.status_code == 200, changed.text

    purged = subprocess.run(
        [str(Path(sys.executable).parent / "tenchi"), *PURGE_ARGUMENTS],
        cwd=REPOSITORY,
        env=clean_env(pair.settings),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert purged.returncode == 0, purged.stdout + purged.stderr

    for token in [*words, "zqpurgezzxk"]:
        assert [await found(http, token) for http in clients] == [[], []], token
    rows = search_rows_of(pair.directory / "shared.db", "user/alice/")
    assert set(rows.values()) == {0}, rows
