"""`wenchang serve` as a real process: first run, the HTTP API, restart, secrecy."""

import re
import signal
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.infra.tokens.token_file import read_token_file
from tests.support.server import ServerProcess, running_server

TOKEN_PATTERN = re.compile(r"wct_[A-Za-z0-9_-]+")
FACT = "- [stated] Prefers tea.\n"


@dataclass(frozen=True, slots=True)
class FirstRun:
    server: ServerProcess
    directory: Path
    token: str


def printed_token(server: ServerProcess) -> str:
    found = TOKEN_PATTERN.search(server.stdout())
    assert found, server.describe()
    return found.group()


def output_after_banner(server: ServerProcess) -> str:
    """Everything the server printed except the first-run banner itself."""
    stdout = server.stdout()
    banner_end = f"{server.url}/v1/index\n"
    return stdout[stdout.index(banner_end) + len(banner_end) :] + server.stderr()


def api(server: ServerProcess, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.url}/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10.0,
    )


def create(http: httpx.Client, path: str, content: str = FACT) -> dict[str, Any]:
    response = http.put(
        f"/files/user/{path}",
        json={"content": content, "description": "Drinks.", "aliases": ["tea"]},
        headers={"If-None-Match": "*"},
    )
    assert response.status_code == 201, response.text
    return response.json()


def if_match(version: str) -> dict[str, str]:
    return {"If-Match": f'"{version}"'}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Generator[FirstRun]:
    directory = tmp_path_factory.mktemp("first-run")
    logs = tmp_path_factory.mktemp("first-run-logs")
    with running_server(directory, logs=logs) as server:
        yield FirstRun(server, directory, printed_token(server))


@pytest.fixture
def http(first_run: FirstRun) -> Generator[httpx.Client]:
    with api(first_run.server, first_run.token) as client:
        yield client


def test_first_run_prints_an_owner_token_with_a_client_snippet(
    first_run: FirstRun,
) -> None:
    """An empty directory gets one token, shown with ready-to-paste MCP config."""
    stdout = first_run.server.stdout()

    assert "Created wenchang-tokens.json with one owner token" in stdout
    assert f'"url": "{first_run.server.url}/mcp"' in stdout
    assert f"Bearer {first_run.token}" in stdout


def test_first_run_token_file_is_private(first_run: FirstRun) -> None:
    """The token file is readable and writable by its owner only."""
    mode = (first_run.directory / "wenchang-tokens.json").stat().st_mode

    assert stat.S_IMODE(mode) == 0o600


def test_created_file_reads_back_with_its_version_as_etag(http: httpx.Client) -> None:
    """PUT with If-None-Match creates; GET returns the same file and ETag."""
    created = create(http, "prefs/drinks")

    response = http.get("/files/user/prefs/drinks")

    assert response.json() == created
    assert response.headers["ETag"] == f'"{created["version"]}"'
    assert created["sources"] == ["local"]


def test_append_then_replace_edit_the_content_in_place(http: httpx.Client) -> None:
    """append_line adds a fact line; replace_fact swaps its one occurrence."""
    created = create(http, "prefs/food")

    appended = http.post(
        "/files/user/prefs/food/lines",
        json={"line": "- [observed] Skips lunch.", "aliases": ["meals"]},
        headers=if_match(created["version"]),
    ).json()
    replaced = http.post(
        "/files/user/prefs/food/replace",
        json={"old_string": "Skips lunch.", "new_string": "Eats late."},
        headers=if_match(appended["version"]),
    )

    assert appended["content"] == FACT + "- [observed] Skips lunch.\n"
    assert appended["aliases"] == ["tea", "meals"]
    assert replaced.json()["content"] == FACT + "- [observed] Eats late.\n"
    assert replaced.headers["ETag"] == f'"{replaced.json()["version"]}"'


def test_put_with_if_match_replaces_and_answers_200(http: httpx.Client) -> None:
    """write_file on an existing file replaces content, description and aliases."""
    created = create(http, "prefs/music")

    response = http.put(
        "/files/user/prefs/music",
        json={"content": "- [stated] Jazz.\n", "description": "Music.", "aliases": []},
        headers=if_match(created["version"]),
    )

    assert response.status_code == 200
    assert response.json()["content"] == "- [stated] Jazz.\n"
    assert response.json()["version"] != created["version"]


def test_listings_and_index_show_metadata_in_key_order(http: httpx.Client) -> None:
    """The scope, area and index listings name files without their content."""
    create(http, "listed/b")
    create(http, "listed/a")

    area = http.get("/files/user/listed").json()
    scope = http.get("/files/user").json()
    index = http.get("/index").json()

    assert [entry["name"] for entry in area["entries"]] == ["a", "b"]
    assert area["next_cursor"] is None
    assert {"listed/a", "listed/b"} <= {
        f"{entry['area']}/{entry['name']}" for entry in scope["entries"]
    }
    assert {"a", "b"} <= {entry["name"] for entry in index["entries"]}
    assert all("content" not in entry for entry in index["entries"])
    assert index["capped"] == []


def test_delete_at_the_current_version_removes_the_file(http: httpx.Client) -> None:
    """DELETE with If-Match answers 204; the file is then absent."""
    created = create(http, "prefs/gone")

    deleted = http.delete(
        "/files/user/prefs/gone", headers=if_match(created["version"])
    )
    missing = http.get("/files/user/prefs/gone")

    assert deleted.status_code == 204
    assert missing.status_code == 404
    assert missing.json()["details"]["reason"] == "file_absent"


def test_stale_if_match_gets_412_whose_etag_makes_the_retry_succeed(
    http: httpx.Client,
) -> None:
    """A conflict carries the current ETag and content; retrying with it works."""
    created = create(http, "prefs/stale")
    http.put(
        "/files/user/prefs/stale",
        json={"content": "- [stated] Newer.\n", "description": "", "aliases": []},
        headers=if_match(created["version"]),
    )

    conflict = http.post(
        "/files/user/prefs/stale/lines",
        json={"line": "- [inferred] Late."},
        headers=if_match(created["version"]),
    )
    retry = http.post(
        "/files/user/prefs/stale/lines",
        json={"line": "- [inferred] Late."},
        headers={"If-Match": conflict.headers["ETag"]},
    )

    assert conflict.status_code == 412
    assert conflict.json()["details"]["content"] == "- [stated] Newer.\n"
    assert conflict.headers["ETag"] == f'"{conflict.json()["details"]["version"]}"'
    assert retry.status_code == 200
    assert retry.json()["content"] == "- [stated] Newer.\n- [inferred] Late.\n"


def test_mutation_without_a_precondition_gets_428(http: httpx.Client) -> None:
    """PUT with neither If-Match nor If-None-Match is refused."""
    response = http.put(
        "/files/user/prefs/unguarded",
        json={"content": FACT, "description": "", "aliases": []},
    )

    assert response.status_code == 428


def test_unknown_token_gets_401_with_a_bearer_challenge(first_run: FirstRun) -> None:
    """A token the server never issued is refused with WWW-Authenticate."""
    with api(first_run.server, "wct_not-a-real-token") as client:
        response = client.get("/index")

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_printed_token_never_appears_in_later_output(
    first_run: FirstRun, http: httpx.Client
) -> None:
    """After the banner, neither stdout nor stderr repeats the token."""
    create(http, "prefs/logged")
    http.get("/files/user/prefs/missing")
    http.post("/files/user/prefs/logged/lines", json={"line": "bad"})
    http.post(
        "/files/user/prefs/logged/lines",
        json={"line": "- [stated] x"},
        headers=if_match("stale"),
    )

    later = output_after_banner(first_run.server)

    assert "/v1/files/user/prefs/logged/lines" in later
    assert first_run.token not in later


def test_restart_keeps_data_and_prints_no_new_token(tmp_path: Path) -> None:
    """SIGTERM shuts down gracefully; a restart on the same directory keeps data."""
    data = tmp_path / "data"
    data.mkdir()
    with running_server(data, logs=tmp_path / "logs") as first:
        token = printed_token(first)
        with api(first, token) as client:
            created = create(client, "prefs/kept")
        first_exit = first.stop()

    with (
        running_server(data, logs=tmp_path / "logs") as second,
        api(second, token) as client,
    ):
        read = client.get("/files/user/prefs/kept").json()

    # uvicorn re-raises the signal after a graceful shutdown, so the exit status
    # is "terminated by SIGTERM" rather than 0 (and never SIGKILL's).
    assert first_exit == -signal.SIGTERM
    assert "Application shutdown complete." in first.stderr()
    assert read == created
    assert TOKEN_PATTERN.search(second.stdout() + second.stderr()) is None
    assert len(read_token_file(data / "wenchang-tokens.json").tokens) == 1
