"""A keyed write whose server died mid-way is retryable once its lease runs out.

The promise (docs/guarantees.md): if the server dies between claiming an
``Idempotency-Key`` and recording its result, a retry with that key answers
``409 IDEMPOTENCY_IN_PROGRESS`` (with ``Retry-After``) for up to 60 s, after
which it runs again under its version guard, and applies once.

The crash is real: a ``wenchang serve`` whose request store is its own SQLite
file (or Redis) claims the key, its write then waits on a lock this test holds
on the memory database, and it gets SIGKILL there. A second server on the same
files answers the retries. Sixty seconds passing is staged by moving the dead
reservation's deadline back by the lease in the real store (no clock or port of
ours is replaced).
"""

import asyncio
import sqlite3
import time
import uuid
from collections.abc import Callable, Generator
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import pytest
from redis import Redis

from app.infra.tokens.token_file import create_token
from app.server.http.binding import IDEMPOTENCY_LEASE_SECONDS
from app.shared.identity import Grant
from tests.support.loopback import LOOPBACK
from tests.support.redis_server import RedisServer
from tests.support.server import running_server, start_server

FILE = "/v1/files/user/notes/tea"
BODY: dict[str, object] = {
    "content": "- [stated] Likes tea.\n",
    "description": "Tea",
    "aliases": [],
}
KEY = f"crash-{uuid.uuid4().hex}"
WAIT_SECONDS = 20.0


@contextmanager
def write_lock(database: Path) -> Generator[None]:
    """Hold SQLite's write lock on ``database``: every writer waits behind it."""
    with closing(sqlite3.connect(database, isolation_level=None)) as connection:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            connection.execute("ROLLBACK")


def wait_for(found: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not found():
        assert time.monotonic() < deadline, "the first attempt never claimed its key"
        time.sleep(0.01)


class SqliteRecords:
    """The idempotency rows of a request store on its own SQLite file."""

    def __init__(self, path: Path) -> None:
        self.url = f"sqlite:///{path}"
        self._path = path

    def _run(self, sql: str) -> list[tuple[object, ...]]:
        with closing(sqlite3.connect(self._path, isolation_level=None)) as db:
            return db.execute(sql).fetchall()

    def reserved(self) -> bool:
        try:
            rows = self._run("SELECT state FROM idempotency_records")
        except sqlite3.OperationalError:  # the table is made at the server's start
            return False
        return rows == [("reserved",)]

    def age_by_the_lease(self) -> None:
        lease = IDEMPOTENCY_LEASE_SECONDS
        self._run(
            f"UPDATE idempotency_records SET reserved_until = reserved_until - {lease}"
        )


# KEYS[] none; ARGV: pattern. The state of the one record matching, else ''.
_STATE = """
local found = redis.call('KEYS', ARGV[1])
if #found ~= 1 then return '' end
return redis.call('HGET', found[1], 'state')
"""
# ARGV: pattern, milliseconds. Moves the record's reservation deadline back.
_AGE = """
local found = redis.call('KEYS', ARGV[1])
local held = tonumber(redis.call('HGET', found[1], 'reserved_until'))
redis.call('HSET', found[1], 'reserved_until',
           string.format('%d', held - tonumber(ARGV[2])))
return #found
"""


class RedisRecords:
    """The idempotency hash of KEY in a request store on Redis."""

    def __init__(self, server: RedisServer) -> None:
        self.url = server.url
        client = Redis(host=LOOPBACK, port=server.port)
        self._state, self._age = map(client.register_script, (_STATE, _AGE))
        self._pattern = f"wenchang:idempotency:*{KEY}"

    def reserved(self) -> bool:
        return self._state(args=[self._pattern]) == b"reserved"

    def age_by_the_lease(self) -> None:
        lease = IDEMPOTENCY_LEASE_SECONDS * 1000
        assert self._age(args=[self._pattern, lease]) == 1


type Records = SqliteRecords | RedisRecords


async def crash_mid_write(
    tmp_path: Path, settings: dict[str, str], auth: dict[str, str], records: Records
) -> None:
    """Claim KEY in a real server, then SIGKILL it while its write waits."""
    server = start_server(tmp_path, logs=tmp_path / "logs", settings=settings)
    try:
        server.wait_until_healthy()
        with write_lock(tmp_path / "memory.db"):
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                first = asyncio.create_task(
                    http.put(FILE, json=BODY, headers=auth | {"If-None-Match": "*"})
                )
                await asyncio.to_thread(wait_for, records.reserved)
                server.process.kill()  # SIGKILL: no handler runs, nothing settles
                with pytest.raises(httpx.TransportError):
                    await first
    finally:
        server.stop()


@pytest.mark.parametrize("store", ["sqlite", "redis"])
async def test_a_key_whose_server_died_mid_write_is_retryable_after_its_lease(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    if store == "redis":
        redis_server: RedisServer = request.getfixturevalue("redis_server")
        records: Records = RedisRecords(redis_server)
    else:
        records = SqliteRecords(tmp_path / "requests.db")
    secret, _ = create_token(
        tmp_path / "tokens.json", {"user": Grant("alice", "owner")}
    )
    auth = {"Authorization": f"Bearer {secret}"}
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{tmp_path / 'memory.db'}",
        "WENCHANG_TOKENS_FILE": str(tmp_path / "tokens.json"),
        "WENCHANG_REQUEST_STORE": records.url,
        "WENCHANG_RATE_LIMIT": "0",
    }
    keyed = auth | {"If-None-Match": "*", "Idempotency-Key": KEY}

    await crash_mid_write(tmp_path, settings, keyed, records)

    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            waiting = await http.put(FILE, json=BODY, headers=keyed)
            absent = await http.get(FILE, headers=auth)
            records.age_by_the_lease()
            retried = await http.put(FILE, json=BODY, headers=keyed)
            replayed = await http.put(FILE, json=BODY, headers=keyed)
            stored = await http.get(FILE, headers=auth)
            versions = await http.get(f"{FILE}/versions", headers=auth)

    assert waiting.status_code == 409, waiting.text
    assert waiting.json()["code"] == "IDEMPOTENCY_IN_PROGRESS"
    assert 1 <= int(waiting.headers["retry-after"]) <= IDEMPOTENCY_LEASE_SECONDS
    assert absent.status_code == 404  # the killed write never landed
    assert retried.status_code == 201, retried.text
    assert replayed.status_code == 201, replayed.text
    assert replayed.json()["version"] == retried.json()["version"]
    assert stored.json()["content"] == BODY["content"]
    assert len(versions.json()["entries"]) == 1  # applied once
