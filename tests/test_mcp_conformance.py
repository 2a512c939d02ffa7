"""The official MCP conformance suite's resource scenarios against `/mcp` and
`/mcp/session` (docs/mcp.md, "Conformance").

`@modelcontextprotocol/conformance` (pinned; it needs Node 22, fetched as the
pinned `node` package) connects as a 2025-11-25 client without credentials, so
the app is served behind a wrapper that adds a bearer token to each request.
The read scenarios read fixtures the suite expects of every server under test;
the app is composed here with `tests/support/mcp_conformance_fixtures` (never
in the shipped server). The subscribe scenarios need a session: they run
against `/mcp/session`. `tests/mcp_conformance_baseline.yml` names any scenario
that cannot pass, with why, and the suite fails when one of them passes.
"""

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import serve
from tests.support.mcp_conformance_fixtures import add_conformance_fixtures

CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node@22.12.0"
"""The suite imports ``fs.globSync``, which Node has from version 22."""
SCENARIOS = {
    "resources-list": "/mcp",
    "resources-read-text": "/mcp",
    "resources-read-binary": "/mcp",
    "resources-templates-read": "/mcp",
    "resources-subscribe": "/mcp/session",
    "resources-unsubscribe": "/mcp/session",
}
"""Each scenario and the endpoint it runs against."""
BASELINE = Path(__file__).with_name("mcp_conformance_baseline.yml")
SCENARIO_SECONDS = 300
"""A bound on one scenario, the first including npm's download of the suite."""


def with_token(app: ASGIApp, token: str) -> ASGIApp:
    """``app``, with ``Authorization: Bearer <token>`` on every HTTP request."""
    header = (b"authorization", f"Bearer {token}".encode())

    async def authorised(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [*scope["headers"], header]}
        await app(scope, receive, send)

    return authorised


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tokens = tmp_path_factory.mktemp("conformance") / "tokens.json"
    token, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    app = build_app(
        Settings(storage="memory://", tokens_file=str(tokens)),
        mcp_extensions=(add_conformance_fixtures,),
    )
    with serve(with_token(app, token)) as served:
        yield served


@pytest.mark.skipif(shutil.which("npx") is None, reason="needs npx (Node.js)")
def test_the_resource_scenarios_pass_or_are_baselined(url: str, tmp_path: Path) -> None:
    suite = ["npx", "-y", "-p", NODE, "-p", CONFORMANCE, "conformance", "server"]
    options = ["-o", str(tmp_path), "--expected-failures", str(BASELINE)]
    outcomes: dict[str, str] = {}
    for scenario, path in SCENARIOS.items():
        ran = subprocess.run(
            [*suite, "--url", url + path, *options, "--scenario", scenario],
            capture_output=True,
            text=True,
            timeout=SCENARIO_SECONDS,
            check=False,
        )
        if ran.returncode != 0:
            outcomes[scenario] = ran.stdout[-2000:] + ran.stderr[-2000:]
    assert outcomes == {}
