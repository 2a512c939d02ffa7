"""Two ``wenchang serve`` processes on one SQLite file, with default settings.

Each keeps its own in-memory index cache (30 s TTL by default); both are warmed
before every write, so a cache that missed another process's write would
show. A write or delete answered by one process is in the other's index at
once, and a purge run by the CLI (``tenchi task run memory.purge``) reaches both
running servers through the entity's change marker in the database.
"""

import json
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.server import ServerProcess, clean_env, running_server

REPOSITORY = Path(__file__).resolve().parents[1]
FILES = ("alpha", "beta", "gamma", "delta")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def token(workdir: Path) -> str:
    grants = {"user": Grant(entity_id="alice", role="owner")}
    secret, _ = create_token(workdir / "wenchang-tokens.json", grants, label="ryw")
    return secret


@pytest.fixture
def servers(
    workdir: Path, token: str, tmp_path_factory: pytest.TempPathFactory
) -> Generator[tuple[ServerProcess, ServerProcess]]:
    # The token file exists before either server starts: a server that found none
    # would mint its own, and the test's token would race the file's reload.
    del token
    logs = tmp_path_factory.mktemp("logs")
    with (
        running_server(workdir, logs=logs) as first,
        running_server(workdir, logs=logs) as second,
    ):
        yield first, second


def index_of(server: ServerProcess, headers: dict[str, str]) -> dict[str, str]:
    """name → version of every file in the server's index."""
    reply = httpx.get(f"{server.url}/v1/index", headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    return {entry["name"]: entry["version"] for entry in reply.json()["entries"]}


def create(server: ServerProcess, headers: dict[str, str], name: str) -> str:
    reply = httpx.put(
        f"{server.url}/v1/files/user/notes/{name}",
        json={"content": f"- [stated] {name}\n", "description": name, "aliases": []},
        headers=headers | {"If-None-Match": "*"},
        timeout=30,
    )
    assert reply.status_code == 201, reply.text
    return str(reply.json()["version"])


def purge_by_cli(workdir: Path) -> Any:
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "tenchi"),
            "task",
            "run",
            "memory.purge",
            "--input",
            json.dumps({"scope": "user", "entity_id": "alice", "dry_run": False}),
            "--json",
        ],
        cwd=REPOSITORY,
        env=clean_env(
            {
                "WENCHANG_STORAGE": f"sqlite:///{workdir / 'wenchang.db'}",
                "WENCHANG_TOKENS_FILE": str(workdir / "wenchang-tokens.json"),
            }
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)["output"]


def test_a_write_through_one_process_is_in_the_others_index_at_once(
    servers: tuple[ServerProcess, ServerProcess], token: str
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    written: dict[str, str] = {}
    for turn, name in enumerate(FILES):
        writer, reader = servers if turn % 2 == 0 else servers[::-1]
        # Both caches hold the listing from before this write.
        assert index_of(reader, headers) == written
        assert index_of(writer, headers) == written
        written[name] = create(writer, headers, name)
        assert index_of(reader, headers) == written

    first, second = servers
    deleted = httpx.delete(
        f"{first.url}/v1/files/user/notes/alpha",
        headers=headers | {"If-Match": f'"{written.pop("alpha")}"'},
        timeout=30,
    )
    assert deleted.status_code == 204
    assert index_of(second, headers) == written


def test_a_cli_purge_reaches_every_running_server(
    servers: tuple[ServerProcess, ServerProcess], token: str, workdir: Path
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    first, second = servers
    for name in FILES:
        create(first, headers, name)
    assert set(index_of(first, headers)) == set(index_of(second, headers)) == set(FILES)

    report = purge_by_cli(workdir)

    assert report["objects"] == len(FILES)
    assert index_of(first, headers) == index_of(second, headers) == {}


def test_a_cli_purge_moves_every_servers_index_tag(
    servers: tuple[ServerProcess, ServerProcess], token: str, workdir: Path
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    first = servers[0]
    create(first, headers, FILES[0])
    tag = httpx.get(f"{first.url}/v1/index", headers=headers, timeout=30).headers[
        "ETag"
    ]
    for server in servers:
        revalidated = httpx.get(
            f"{server.url}/v1/index",
            headers=headers | {"If-None-Match": tag},
            timeout=30,
        )
        assert revalidated.status_code == 304

    purge_by_cli(workdir)

    for server in servers:
        reply = httpx.get(
            f"{server.url}/v1/index",
            headers=headers | {"If-None-Match": tag},
            timeout=30,
        )
        assert reply.status_code == 200
        assert reply.json()["entries"] == []
