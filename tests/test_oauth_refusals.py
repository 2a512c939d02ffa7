"""Every refusal of the OAuth flow, through HTTP and MCP, with RFC 6749 bodies.

Wrong verifier, reused code, foreign resource, reused refresh token (which
ends its whole family), revoked token, a read-only consent that tries to
write, a forged consent form; plus the audit events and `wenchang token`."""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mcp_scenarios import call
from tests.mcp_support import failed, http_session, ok
from tests.oauth_support import (
    CALLBACK,
    Site,
    authorization_url,
    code_for,
    consent,
    hidden_fields,
    oauth_site,
    pkce,
    redirect_params,
    register,
    token_request,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with oauth_site(tmp_path_factory.mktemp("oauth-refusals")) as served:
        yield served


def tokens_for(site: Site, client_id: str, **consented: Any) -> dict[str, str]:
    verifier, challenge = pkce()
    code = code_for(site, client_id, challenge, **consented)
    answer = token_request(
        site,
        grant_type="authorization_code",
        code=code,
        code_verifier=verifier,
        client_id=client_id,
        redirect_uri=CALLBACK,
        resource=f"{site.url}/mcp",
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    issued: dict[str, str] = answer.json()
    return issued


def refused_with(answer: httpx.Response, code: str) -> None:
    assert answer.status_code in (400, 401), answer.text
    assert answer.json()["error"] == code
    assert "wc" not in answer.json()["error_description"]


def mcp_status(site: Site, token: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "authorization": f"Bearer {token}",
        "accept": "application/json, text/event-stream",
    }
    return httpx.post(f"{site.url}/mcp", json=body, headers=headers).status_code


def test_metadata_and_the_401_name_each_other(site: Site) -> None:
    answer = httpx.post(f"{site.url}/mcp", json={})
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    resource_url = f"{site.url}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{resource_url}"' in challenge
    assert 'scope="memory.read memory.write"' in challenge
    resource = httpx.get(resource_url).json()
    assert resource["resource"] == f"{site.url}/mcp"
    assert resource["authorization_servers"] == [site.url]
    assert resource["scopes_supported"] == ["memory.read", "memory.write"]
    assert (
        httpx.get(f"{site.url}/.well-known/oauth-protected-resource").json() == resource
    )
    server = httpx.get(f"{site.url}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == site.url
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True
    assert server["revocation_endpoint"] == f"{site.url}/oauth/revoke"
    assert set(server["grant_types_supported"]) == {
        "authorization_code",
        "refresh_token",
    }


def test_a_wrong_verifier_and_a_reused_code_are_invalid_grant(site: Site) -> None:
    client_id = register(site)
    verifier, challenge = pkce()
    code = code_for(site, client_id, challenge)
    form = {"grant_type": "authorization_code", "code": code, "client_id": client_id}

    refused_with(token_request(site, **form, code_verifier=pkce()[0]), "invalid_grant")
    # The failed attempt used the code up: even the right verifier is too late.
    refused_with(token_request(site, **form, code_verifier=verifier), "invalid_grant")

    verifier, challenge = pkce()
    form["code"] = code_for(site, client_id, challenge)
    assert token_request(site, **form, code_verifier=verifier).status_code == 200
    refused_with(token_request(site, **form, code_verifier=verifier), "invalid_grant")


def test_a_foreign_resource_is_invalid_target(site: Site) -> None:
    client_id = register(site)
    verifier, challenge = pkce()
    url = authorization_url(
        site, client_id, challenge, resource="https://elsewhere.example/mcp"
    )
    answer = httpx.get(url)
    assert answer.status_code == 302
    params = redirect_params(answer.headers["location"])
    assert params["error"] == "invalid_target" and params["state"] == "s-1"

    code = code_for(site, client_id, challenge)
    foreign = token_request(
        site,
        grant_type="authorization_code",
        code=code,
        code_verifier=verifier,
        client_id=client_id,
        resource="https://elsewhere.example/mcp",
    )
    refused_with(foreign, "invalid_target")


@pytest.mark.parametrize(
    "challenge", ["A" * 42, "A" * 129, "é" * 43, "A" * 42 + "+", "A" * 42 + "="]
)
def test_a_code_challenge_is_43_to_128_unreserved_characters(
    site: Site, challenge: str
) -> None:
    client_id = register(site)
    answer = httpx.get(authorization_url(site, client_id, challenge))
    assert answer.status_code == 302
    params = redirect_params(answer.headers["location"])
    assert params["error"] == "invalid_request" and params["state"] == "s-1"


def test_unknown_clients_and_redirect_uris_are_shown_not_redirected(site: Site) -> None:
    _, challenge = pkce()
    unknown = httpx.get(authorization_url(site, "wcl_nobody", challenge))
    assert unknown.status_code == 400
    assert '<code id="error-code">invalid_client</code>' in unknown.text
    policy = unknown.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    client_id = register(site)
    elsewhere = authorization_url(
        site, client_id, challenge, redirect_uri="https://attacker.example/cb"
    )
    answer = httpx.get(elsewhere)
    assert answer.status_code == 400 and "location" not in answer.headers
    assert '<code id="error-code">invalid_request</code>' in answer.text


def test_a_forged_or_cross_site_consent_form_is_refused(site: Site) -> None:
    client_id = register(site)
    _, challenge = pkce()
    page = httpx.get(authorization_url(site, client_id, challenge))
    fields = hidden_fields(page.text)
    with_token = {**fields, "token": site.owner}
    forged = httpx.post(
        f"{site.url}/oauth/authorize", data={**with_token, "csrf": "x.y"}
    )
    assert forged.status_code == 403
    for mac in ("é", "0" * 64):  # one not even ASCII: refused, not an error
        forged = httpx.post(
            f"{site.url}/oauth/authorize", data={**with_token, "csrf": f"YQ==.{mac}"}
        )
        assert forged.status_code == 403
    cross = httpx.post(
        f"{site.url}/oauth/authorize",
        data=with_token,
        headers={"origin": "https://attacker.example"},
    )
    assert cross.status_code == 403
    decided = httpx.post(
        f"{site.url}/oauth/authorize",
        data={**fields, "decision": "allow", "grant": "user=ada:owner"},
    )
    assert decided.status_code == 403  # no sealed sign-in: nobody consented
    bad_token = httpx.post(
        f"{site.url}/oauth/authorize", data={**fields, "token": "wct_wrong"}
    )
    assert bad_token.status_code == 401 and 'id="message"' in bad_token.text


def test_deny_redirects_with_access_denied(site: Site) -> None:
    client_id = register(site)
    _, challenge = pkce()
    params = consent(
        authorization_url(site, client_id, challenge), site.owner, decision="deny"
    )
    assert params["error"] == "access_denied"
    assert params["state"] == "s-1" and params["iss"] == site.url


async def test_a_read_only_consent_cannot_write(site: Site) -> None:
    issued = tokens_for(site, register(site), read_only=True)
    assert issued["scope"] == "memory.read"
    async with http_session(site.url, issued["access_token"]) as session:
        ok(await call(session, "get_memory_index"))
        written = await call(
            session,
            "write_file",
            scope="user",
            area="notes",
            name="x",
            content="- [stated] x\n",
            description="x",
            aliases=[],
            expected_version=None,
        )
        details = failed(written, "RESTRICTED_SCOPE")
        assert details["reason"] == "role_required"


async def test_only_the_chosen_grants_reach_the_client(site: Site) -> None:
    issued = tokens_for(site, register(site), grants=["team=acme:owner"])
    async with http_session(site.url, issued["access_token"]) as session:
        listed = await call(session, "list_prefix", scope="user")
        assert failed(listed, "INVALID_ARGUMENT")["argument"] == "scope"


def test_refresh_rotates_and_a_reused_refresh_token_ends_the_family(
    site: Site,
) -> None:
    client_id = register(site)
    first = tokens_for(site, client_id)
    form = {"grant_type": "refresh_token", "client_id": client_id}
    second = token_request(site, **form, refresh_token=first["refresh_token"])
    assert second.status_code == 200, second.text
    rotated = second.json()
    assert rotated["refresh_token"] != first["refresh_token"]
    assert mcp_status(site, rotated["access_token"]) == 200

    reused = token_request(site, **form, refresh_token=first["refresh_token"])
    refused_with(reused, "invalid_grant")
    assert mcp_status(site, rotated["access_token"]) == 401
    again = token_request(site, **form, refresh_token=rotated["refresh_token"])
    refused_with(again, "invalid_grant")


def test_a_revoked_token_stops_at_once(site: Site) -> None:
    client_id = register(site)
    issued = tokens_for(site, client_id)
    assert mcp_status(site, issued["access_token"]) == 200
    revoked = httpx.post(
        f"{site.url}/oauth/revoke",
        data={"token": issued["refresh_token"], "client_id": client_id},
    )
    assert revoked.status_code == 200
    assert mcp_status(site, issued["access_token"]) == 401
    answer = httpx.post(
        f"{site.url}/mcp",
        json={},
        headers={"authorization": f"Bearer {issued['access_token']}"},
    )
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]


def test_oauth_tokens_are_for_mcp_only(site: Site) -> None:
    issued = tokens_for(site, register(site))
    headers = {"authorization": f"Bearer {issued['access_token']}"}
    assert httpx.get(f"{site.url}/v1/index", headers=headers).status_code == 401
    owner = {"authorization": f"Bearer {site.owner}"}
    assert httpx.get(f"{site.url}/v1/index", headers=owner).status_code == 200
    assert mcp_status(site, site.owner) == 200


def test_the_flow_is_audited_and_the_cli_lists_and_revokes_clients(
    site: Site, tmp_path: Path
) -> None:
    client_id = register(site)
    first = tokens_for(site, client_id)
    form = {"grant_type": "refresh_token", "client_id": client_id}
    token_request(site, **form, refresh_token=first["refresh_token"])
    token_request(site, **form, refresh_token=first["refresh_token"])
    second = tokens_for(site, client_id)
    owner = {"authorization": f"Bearer {site.owner}"}
    events = httpx.get(
        f"{site.url}/v1/audit", params={"scope": "user"}, headers=owner
    ).json()["events"]
    operations = {
        e["operation"]
        for e in events
        if e["token_id"] and e["token_id"].startswith("oauth-")
    }
    assert {
        "oauth.consent",
        "oauth.token",
        "oauth.refresh",
        "oauth.refresh_reuse",
    } <= operations

    env = {**os.environ, "WENCHANG_TOKENS_FILE": str(site.tokens)}
    env["WENCHANG_STORAGE"] = f"sqlite:///{site.tokens.parent / 'memory.db'}"
    wenchang = str(Path(sys.executable).parent / "wenchang")
    listed = subprocess.run(
        [wenchang, "token", "list"], env=env, capture_output=True, text=True, check=True
    )
    assert f"oauth client {client_id}" in listed.stdout
    assert second["access_token"] not in listed.stdout
    subprocess.run(
        [wenchang, "token", "revoke", client_id],
        env=env,
        check=True,
        capture_output=True,
    )
    assert mcp_status(site, second["access_token"]) == 401
