"""The published OpenAPI document is the contract snapshot plus reader metadata."""

import json
from pathlib import Path
from unittest.mock import ANY

import pytest
from tenchi.testing import open_http

from app.server.asgi import build_app
from app.server.cli.main import main
from app.server.settings import Settings

SNAPSHOT = Path(__file__).parent.parent / "openapi.json"


async def test_served_document_is_the_snapshot_with_license_and_server(
    tmp_path: Path,
) -> None:
    """/openapi.json adds only info.license and a relative server to openapi.json."""
    settings = Settings(storage="memory://", tokens_file=str(tmp_path / "t.json"))
    async with open_http(build_app(settings)) as http:
        served = (await http.get("/openapi.json")).json()
    snapshot = json.loads(SNAPSHOT.read_text())

    license_ = served["info"].pop("license")
    servers = served.pop("servers")

    assert served == snapshot
    assert license_ == {"name": "Apache-2.0", "identifier": "Apache-2.0"}
    assert [server["url"] for server in servers] == ["/"]


def test_wenchang_openapi_prints_the_published_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`wenchang openapi` prints what the server publishes, for linters."""
    code = main(["openapi"])
    printed = json.loads(capsys.readouterr().out)

    assert code == 0
    assert printed["info"]["license"]["identifier"] == "Apache-2.0"
    assert printed["servers"] == [{"url": "/", "description": ANY}]
