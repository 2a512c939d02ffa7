"""A sweep run by an operator reaches a server in another process sharing the
SQLite file: its cached index (owner's view) no longer lists the erased file,
nor can anyone read it or its history; a file kept meanwhile stays."""

from collections.abc import Generator
from pathlib import Path

import httpx
import pytest

from app.features.memory.schemas import SweepReport
from app.infra.tokens.token_file import create_token
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from app.shared.identity import parse_grants
from tests.support.server import running_servers

PAST = "2020-01-01T00:00:00Z"
BODY: dict[str, object] = {
    "content": "- [stated] a\n",
    "description": "",
    "aliases": [],
}


@pytest.fixture
def served(tmp_path: Path) -> Generator[tuple[str, str, Settings]]:
    tokens = tmp_path / "tokens.json"
    database = f"sqlite:///{tmp_path / 'shared.db'}"
    settings = {
        "WENCHANG_STORAGE": database,
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_RATE_LIMIT": "0",
    }
    owner, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    with running_servers(1, tmp_path, settings=settings) as (server,):
        yield server.url, owner, Settings(storage=database, tokens_file=str(tokens))


def names(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    return sorted(entry["name"] for entry in answer.json()["entries"])


async def test_a_sweep_in_another_process_reaches_the_server(
    served: tuple[str, str, Settings],
) -> None:
    url, owner, settings = served
    shown = {"include_expired": "true"}
    auth = {"Authorization": f"Bearer {owner}"}
    with httpx.Client(base_url=url, headers=auth, timeout=30) as http:
        made = http.put(
            "/v1/files/user/notes/old", json=BODY, headers={"If-None-Match": "*"}
        )
        assert made.status_code == 201, made.text
        expired = http.put(
            "/v1/files/user/notes/old",
            json=BODY | {"expires_at": PAST},
            headers={"If-Match": made.headers["ETag"]},
        )
        assert expired.status_code == 200, expired.text
        kept = http.put(
            "/v1/files/user/notes/kept", json=BODY, headers={"If-None-Match": "*"}
        )
        assert kept.status_code == 201, kept.text
        assert names(http.get("/v1/index", params=shown)) == ["kept", "old"]

        report = await build_task_runner(settings).run(
            "memory.sweep_expired", input={"dry_run": False}
        )

        assert isinstance(report, SweepReport)
        assert [(f.entity_id, f.name) for f in report.files] == [("alice", "old")]
        assert names(http.get("/v1/index", params=shown)) == ["kept"]
        gone = http.get("/v1/files/user/notes/old", params=shown)
        assert gone.status_code == 404
        versions = http.get("/v1/files/user/notes/old/versions")
        assert versions.status_code == 404, versions.text
        assert http.get("/v1/files/user/notes/kept").status_code == 200
