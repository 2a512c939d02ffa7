"""The OAuth consent page in a real headless Chromium, as a person meets it.

No JavaScript of ours runs: the page is two plain forms. It must show the
client's name and the redirect host, take a Wenchang token, offer each grant,
and send the browser back to the client with a code (or ``access_denied``),
under the same CSP as the memory browser: any refusal by the policy fails the
test. Each step is checked by axe-core and photographed into
test-artifacts/browser/.
"""

import re
from collections.abc import Generator

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.oauth_support import (
    CALLBACK,
    Site,
    authorization_url,
    oauth_site,
    pkce,
    redirect_params,
    register,
    token_request,
)
from tests.support.browser import check_page, running_chromium


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Generator[Site]:
    with oauth_site(tmp_path_factory.mktemp("oauth-browser")) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Generator[Browser]:
    with running_chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Generator[tuple[Page, list[str]]]:
    """A tab whose visits to the client's redirect URI are recorded (and
    answered with a stub page); fails on any page error or CSP refusal."""
    context = browser.new_context(viewport={"width": 900, "height": 760})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    landed: list[str] = []
    problems: list[str] = []

    def callback(route: Route) -> None:
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>done</p>")

    tab.route(re.compile(re.escape(CALLBACK.rsplit("/", 1)[0]) + ".*"), callback)
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    tab.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if re.search("Content Security Policy|Trusted Type", m.text)
            else None
        ),
    )
    yield tab, landed
    context.close()
    assert not problems, problems


def test_a_person_signs_in_chooses_grants_and_allows_read_only(
    site: Site, page: tuple[Page, list[str]]
) -> None:
    tab, landed = page
    client_id = register(site)
    verifier, challenge = pkce()
    tab.goto(authorization_url(site, client_id, challenge))
    expect(tab.locator("#client-name")).to_have_text("Test assistant")
    expect(tab.locator("#redirect-host")).to_have_text("127.0.0.1")
    check_page(tab, "oauth-1-sign-in")

    tab.fill("#token", "wct_not-a-real-token")
    tab.click("button[type=submit]")
    expect(tab.locator("#message")).to_contain_text("not valid")
    check_page(tab, "oauth-2-bad-token")

    tab.fill("#token", site.owner)
    tab.click("button[type=submit]")
    expect(tab.get_by_label("team: acme (owner)")).to_be_checked()
    check_page(tab, "oauth-3-choose-grants")
    tab.get_by_label("team: acme (owner)").uncheck()
    tab.get_by_label(re.compile("Read only")).check()
    tab.click("button[value=allow]")
    tab.wait_for_url(re.compile(re.escape(CALLBACK)))

    params = redirect_params(landed[-1])
    assert params["state"] == "s-1" and params["iss"] == site.url
    issued = token_request(
        site,
        grant_type="authorization_code",
        code=params["code"],
        code_verifier=verifier,
        client_id=client_id,
    ).json()
    assert issued["scope"] == "memory.read"
    owner = {"authorization": f"Bearer {site.owner}"}
    events = httpx.get(
        f"{site.url}/v1/audit", params={"scope": "team"}, headers=owner
    ).json()["events"]
    assert not [e for e in events if e["operation"] == "oauth.consent"]


def test_deny_sends_the_browser_back_with_access_denied(
    site: Site, page: tuple[Page, list[str]]
) -> None:
    tab, landed = page
    _, challenge = pkce()
    tab.goto(authorization_url(site, register(site), challenge))
    tab.fill("#token", site.owner)
    tab.click("button[type=submit]")
    tab.click("button[value=deny]")
    tab.wait_for_url(re.compile(re.escape(CALLBACK)))
    assert redirect_params(landed[-1])["error"] == "access_denied"


def test_an_unknown_client_gets_an_error_page(
    site: Site, page: tuple[Page, list[str]]
) -> None:
    tab, _ = page
    _, challenge = pkce()
    tab.goto(authorization_url(site, "wcl_unknown", challenge))
    expect(tab.locator("#error-code")).to_have_text("invalid_client")
    check_page(tab, "oauth-4-unknown-client")
