"""OAuth test helpers: a served app at a known public URL, and a person at the
consent page (plain HTTP form posts, as a browser without JavaScript sends them)."""

import base64
import hashlib
import html
import re
import secrets
import threading
import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import uvicorn

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import LOOPBACK, START_SECONDS, STOP_SECONDS, free_port

HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
GRANT = re.compile(r'name="grant" value="([^"]*)"')
CALLBACK = "http://127.0.0.1:33418/callback"
OWNER_GRANTS = "user=ada:owner,team=acme:owner"


@dataclass(frozen=True, slots=True)
class Site:
    url: str
    owner: str
    """A ``wct_`` token of ada, owner of her user scope and of team acme."""
    tokens: Path


@contextmanager
def oauth_site(tmp: Path, **values: Any) -> Generator[Site]:
    port = free_port()
    url = f"http://{LOOPBACK}:{port}"
    tokens = tmp / "tokens.json"
    owner, _ = create_token(
        tokens, parse_grants([*OWNER_GRANTS.split(",")]), label="ada"
    )
    settings = Settings(
        storage=values.pop("storage", f"sqlite:///{tmp / 'memory.db'}"),
        tokens_file=str(tokens),
        public_url=url,
        **values,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            build_app(settings), host=LOOPBACK, port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on port {port}")
            time.sleep(0.02)
        yield Site(url, owner, tokens)
    finally:
        server.should_exit = True
        thread.join(STOP_SECONDS)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def hidden_fields(page: str) -> dict[str, str]:
    return {name: html.unescape(value) for name, value in HIDDEN.findall(page)}


def register(site: Site, redirect_uri: str = CALLBACK) -> str:
    answer = httpx.post(
        f"{site.url}/oauth/register",
        json={"client_name": "Test assistant", "redirect_uris": [redirect_uri]},
    )
    assert answer.status_code == 201, answer.text
    client_id: str = answer.json()["client_id"]
    return client_id


def consent(
    authorization_url: str,
    token: str,
    *,
    read_only: bool = False,
    grants: list[str] | None = None,
    decision: str = "allow",
) -> dict[str, str]:
    """Signs in at the consent page and answers it; the redirect's parameters."""
    with httpx.Client(timeout=10.0) as browser:
        page = browser.get(authorization_url)
        assert page.status_code == 200, page.text
        base = f"{urlsplit(authorization_url).scheme}://{urlsplit(authorization_url).netloc}"
        step_two = browser.post(
            f"{base}/oauth/authorize", data={**hidden_fields(page.text), "token": token}
        )
        assert step_two.status_code == 200, step_two.text
        chosen = GRANT.findall(step_two.text) if grants is None else grants
        form: dict[str, Any] = {
            **hidden_fields(step_two.text),
            "grant": [html.unescape(g) for g in chosen],
            "decision": decision,
        }
        if read_only:
            form["read_only"] = "on"
        answer = browser.post(f"{base}/oauth/authorize", data=form)
    assert answer.status_code == 302, answer.text
    return redirect_params(answer.headers["location"])


def redirect_params(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def authorization_url(site: Site, client_id: str, challenge: str, **extra: str) -> str:
    params: Mapping[str, str] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "state": "s-1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{site.url}/mcp",
        "scope": "memory.read memory.write",
        **extra,
    }
    return f"{site.url}/oauth/authorize?{urlencode(params)}"


def token_request(site: Site, **form: str) -> httpx.Response:
    return httpx.post(f"{site.url}/oauth/token", data=form)


def code_for(site: Site, client_id: str, challenge: str, **consented: Any) -> str:
    params = consent(
        authorization_url(site, client_id, challenge), site.owner, **consented
    )
    return params["code"]
