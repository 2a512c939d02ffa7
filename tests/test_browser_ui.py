"""The memory browser at /ui/ in a real headless Chromium against `wenchang serve`.

Every flow a person needs — sign in, browse, read, create, edit, merge a conflict,
delete and restore, search, audit, sign out — driven through the page as a person
would, with a second writer over HTTP where the flow needs one. Each page is
checked by axe-core and photographed into test-artifacts/browser/.
"""

import re
import shutil
import subprocess
import threading
import time
import zipfile
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from app.infra.tokens.token_file import create_token, revoke_token
from app.shared.identity import Grant
from tests.support.browser import check_page, running_chromium, screenshot
from tests.support.server import ServerProcess, running_server

INDEX_BUDGET = 6000
XSS_GLOBALS = (
    "__xss_img",
    "__xss_script",
    "__xss_link",
    "__xss_data",
    "__xss_desc",
    "__xss_alias",
    "__xss_name",
    "__xss_svg",
    "__xss_style",
)


@dataclass(frozen=True, slots=True)
class Site:
    server: ServerProcess
    owner: str
    other_writer: str
    bulk: str
    tokens: Path
    revocable: tuple[str, str]

    def api(self, token: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.server.url}/v1",
            headers={"Authorization": f"Bearer {token or self.owner}"},
            timeout=10.0,
        )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Generator[Site]:
    directory = tmp_path_factory.mktemp("browser-site")
    tokens = directory / "tokens.json"
    ada = {"user": Grant("ada", "owner"), "team": Grant("acme", "owner")}
    owner, _ = create_token(tokens, ada, label="ada-browser")
    other, _ = create_token(tokens, ada, label="other-agent")
    bulk, _ = create_token(tokens, {"user": Grant("bulk", "owner")}, label="bulk")
    revocable, record = create_token(tokens, ada, label="revocable")
    settings = {
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_STORAGE": f"sqlite:///{directory / 'memory.db'}",
        "WENCHANG_INDEX_MAX_BYTES": str(INDEX_BUDGET),
    }
    logs = tmp_path_factory.mktemp("browser-logs")
    with running_server(directory, logs=logs, settings=settings) as server:
        yield Site(server, owner, other, bulk, tokens, (revocable, record.token_id))


@pytest.fixture(scope="module")
def browser() -> Generator[Browser]:
    with running_chromium() as launched:
        yield launched


# Every refusal by the page's CSP is a bug in the page (or a payload that got through
# the sanitiser and was only stopped by the second line of defence).
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  const target = e.target && e.target.outerHTML ? e.target.outerHTML.slice(0, 160) : "";
  const where = `${e.sourceFile}:${e.lineNumber}`;
  console.log(`csp-violation ${e.violatedDirective} ${where} ${e.sample} ${target}`);
});
"""


@pytest.fixture
def page(browser: Browser) -> Generator[Page]:
    """A fresh tab (own sessionStorage); fails on any script error or CSP refusal."""
    context = browser.new_context(viewport={"width": 1200, "height": 820})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    problems: list[str] = []
    tab.add_init_script(REPORT_VIOLATIONS)
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_console(message: ConsoleMessage) -> None:
        text = message.text
        if text.startswith("csp-violation") or (
            message.type == "error"
            and re.search("Content Security Policy|Trusted Type", text)
        ):
            problems.append(f"console: {text}")

    tab.on("console", on_console)
    yield tab
    context.close()
    assert not problems, problems


def write(site: Site, path: str, content: str, **meta: Any) -> dict[str, Any]:
    body = {
        "content": content,
        "description": meta.get("description", ""),
        "aliases": meta.get("aliases", []),
    }
    with site.api(meta.get("token")) as http:
        response = http.put(f"/files/{path}", json=body, headers={"If-None-Match": "*"})
    assert response.status_code == 201, response.text
    return response.json()


def read(site: Site, path: str) -> httpx.Response:
    with site.api() as http:
        return http.get(f"/files/{path}")


def sign_in(page: Page, site: Site, token: str | None = None) -> None:
    page.goto(f"{site.server.url}/ui/")
    page.get_by_label("Token").fill(token or site.owner)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Memory index")).to_be_visible()


def open_file(page: Page, site: Site, path: str, view: str = "") -> None:
    scope, area, name = path.split("/")
    hash_ = "/".join(["#/f", scope, area, name]) + (f"/{view}" if view else "")
    page.goto(f"{site.server.url}/ui/{hash_}")


def test_the_ui_answers_with_its_security_headers(site: Site) -> None:
    """CSP without inline script, nosniff, no referrer, no framing, no cookie."""
    for path in ("/ui/", "/ui/js/main.js", "/ui/css/app.css", "/ui/missing.js"):
        response = httpx.get(f"{site.server.url}{path}", timeout=10.0)
        headers = response.headers
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe" not in csp, path
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert "set-cookie" not in headers
    redirect = httpx.get(f"{site.server.url}/ui", timeout=10.0)
    assert (redirect.status_code, redirect.headers["location"]) == (308, "/ui/")
    script = httpx.get(f"{site.server.url}/ui/js/main.js", timeout=10.0)
    assert script.headers["content-type"].startswith("text/javascript")


def test_sign_in_refuses_a_wrong_token_and_keeps_the_right_one_in_the_tab(
    page: Page, site: Site
) -> None:
    page.goto(f"{site.server.url}/ui/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    check_page(page, "sign-in")
    page.get_by_label("Token").fill("wct_not-a-real-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not accepted")
    assert page.evaluate("() => sessionStorage.length") == 0

    sign_in(page, site)

    assert page.evaluate("() => sessionStorage.getItem('wenchang.token')") == site.owner
    assert page.evaluate("() => document.cookie") == ""
    assert site.owner not in page.url
    history = page.evaluate(
        "() => performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert not [url for url in history if site.owner in url]
    logs = site.server.stdout() + site.server.stderr()
    assert site.owner not in logs and "wct_not-a-real-token" not in logs


def test_browse_groups_the_index_by_scope_and_area(page: Page, site: Site) -> None:
    write(
        site,
        "user/prefs/drinks",
        "- [stated] Prefers tea.\n",
        description="What Ada drinks.",
        aliases=["tea", "beverages"],
    )
    write(
        site,
        "user/people/grace",
        "- [observed] Works on compilers.\n",
        description="Grace, a colleague.",
    )
    write(
        site,
        "team/projects/atlas",
        "# Atlas\n\nShip by Friday.\n",
        description="The Atlas project.",
        aliases=["atlas-2"],
    )

    sign_in(page, site)

    user = page.get_by_role("region", name="Scope user")
    expect(user.get_by_role("region", name=re.compile("^prefs"))).to_contain_text(
        "What Ada drinks."
    )
    expect(user.get_by_role("list", name="Aliases of drinks")).to_contain_text(
        "beverages"
    )
    expect(user.get_by_role("region", name=re.compile("^people"))).to_contain_text(
        "grace"
    )
    team = page.get_by_role("region", name="Scope team")
    expect(team.get_by_role("region", name=re.compile("^projects"))).to_contain_text(
        "atlas"
    )
    expect(page.locator("time").first).to_have_attribute("datetime", re.compile("Z$"))
    check_page(page, "index")

    page.get_by_label("Filter this page").fill("beverages")
    expect(page.get_by_role("link", name="drinks")).to_be_visible()
    expect(page.get_by_role("link", name="grace")).to_be_hidden()
    expect(page.get_by_role("region", name="Scope team")).to_be_hidden()


def test_a_capped_index_says_so_and_lists_the_rest(page: Page, site: Site) -> None:
    for number in range(40):
        write(
            site,
            f"user/bulk/note-{number:02d}",
            f"- [stated] Note {number}.\n",
            description=f"Bulk note number {number} with a longer description.",
            token=site.bulk,
        )

    sign_in(page, site, site.bulk)

    notice = page.get_by_role("region", name=re.compile("The index is capped"))
    expect(notice).to_be_visible()
    check_page(page, "index-capped")
    notice.get_by_role("button", name="List user / bulk").click()
    expect(notice.get_by_role("link", name="note-00")).to_be_visible()


def test_open_a_file_shows_rendered_and_raw_text_metadata_and_version(
    page: Page, site: Site
) -> None:
    created = write(
        site,
        "user/prefs/reading",
        "# Reading\n\n- [stated] Likes **Le Guin**.\n",
        description="Books.",
        aliases=["books"],
    )
    sign_in(page, site)
    page.get_by_role("link", name="reading").click()

    expect(page.get_by_role("heading", name="reading", exact=True)).to_be_visible()
    expect(page.locator(".markdown strong")).to_have_text("Le Guin")
    meta = page.get_by_role("complementary", name="Metadata")
    expect(meta).to_contain_text(created["version"])
    expect(meta).to_contain_text("ada-browser")
    expect(meta).to_contain_text("Books.")
    check_page(page, "file")
    page.get_by_role("button", name="Raw text").click()
    expect(page.get_by_label("Raw text")).to_have_text(
        "# Reading\n\n- [stated] Likes **Le Guin**.\n"
    )


def test_create_a_file_from_the_browser(page: Page, site: Site) -> None:
    sign_in(page, site)
    page.get_by_role("main").get_by_role("link", name="New file").click()
    page.get_by_label("Area").fill("pets")
    page.get_by_label("Name").fill("cat")
    page.get_by_label("Description").fill("Ada's cat.")
    page.get_by_label("Aliases").fill("milo\nfeline")
    page.get_by_label("Content (markdown)").fill("- [stated] The cat is called Milo.\n")
    check_page(page, "create")
    page.get_by_role("button", name="Create").click()

    expect(page.get_by_role("heading", name="cat", exact=True)).to_be_visible()
    stored = read(site, "user/pets/cat").json()
    assert (stored["content"], stored["description"], stored["aliases"]) == (
        "- [stated] The cat is called Milo.\n",
        "Ada's cat.",
        ["milo", "feline"],
    )


def test_edit_append_and_replace_are_version_guarded_changes(
    page: Page, site: Site
) -> None:
    write(site, "user/prefs/music", "- [stated] Likes jazz.\n", description="Music.")
    sign_in(page, site)
    open_file(page, site, "user/prefs/music", "edit")
    page.get_by_label("Content (markdown)").fill("- [stated] Likes jazz and blues.\n")
    check_page(page, "edit")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".markdown")).to_contain_text("jazz and blues")

    page.get_by_label("Label", exact=True).select_option("observed")
    page.get_by_label("Fact", exact=True).fill("Hums Coltrane.")
    page.get_by_role("button", name="Append").click()
    expect(page.locator(".markdown")).to_contain_text("Hums Coltrane.")

    page.get_by_label("Find (exactly once)").fill("blues")
    page.get_by_label("Replace with").fill("soul")
    page.get_by_role("button", name="Replace").click()
    expect(page.locator(".markdown")).to_contain_text("jazz and soul")
    assert read(site, "user/prefs/music").json()["content"] == (
        "- [stated] Likes jazz and soul.\n- [observed] Hums Coltrane.\n"
    )


def test_a_conflicting_edit_shows_their_version_beside_mine_and_saves_the_merge(
    page: Page, site: Site
) -> None:
    first = write(site, "user/work/plan", "- [stated] Step one.\n", description="Plan.")
    sign_in(page, site)
    open_file(page, site, "user/work/plan", "edit")
    editor = page.get_by_label("Content (markdown)")
    editor.fill("- [stated] Step one.\n- [stated] My step.\n")

    with site.api(site.other_writer) as http:
        theirs = http.put(
            "/files/user/work/plan",
            headers={"If-Match": f'"{first["version"]}"'},
            json={
                "content": "- [stated] Step one.\n- [stated] Their step.\n",
                "description": "Plan.",
                "aliases": [],
            },
        )
    assert theirs.status_code == 200, theirs.text
    page.get_by_role("button", name="Save", exact=True).click()

    expect(
        page.get_by_role("heading", name=re.compile("Someone else changed"))
    ).to_be_visible()
    expect(page.get_by_role("textbox", name="Their content")).to_have_value(
        "- [stated] Step one.\n- [stated] Their step.\n"
    )
    expect(editor).to_have_value("- [stated] Step one.\n- [stated] My step.\n")
    assert read(site, "user/work/plan").json()["version"] == theirs.json()["version"]
    check_page(page, "conflict")

    editor.fill("- [stated] Step one.\n- [stated] Their step.\n- [stated] My step.\n")
    page.get_by_role("button", name="Save merged version").click()

    expect(page.get_by_role("heading", name="plan", exact=True)).to_be_visible()
    merged = read(site, "user/work/plan").json()
    assert merged["content"] == (
        "- [stated] Step one.\n- [stated] Their step.\n- [stated] My step.\n"
    )
    assert {"ada-browser", "other-agent"} <= set(merged["sources"])


def test_saving_a_file_deleted_meanwhile_offers_to_recreate_it(
    page: Page, site: Site
) -> None:
    first = write(site, "user/work/gone", "- [stated] Old.\n")
    sign_in(page, site)
    open_file(page, site, "user/work/gone", "edit")
    page.get_by_label("Content (markdown)").fill("- [stated] New.\n")
    with site.api(site.other_writer) as http:
        gone = http.delete(
            "/files/user/work/gone", headers={"If-Match": f'"{first["version"]}"'}
        )
    assert gone.status_code == 204
    page.get_by_role("button", name="Save", exact=True).click()

    expect(
        page.get_by_role("heading", name="This file was deleted meanwhile")
    ).to_be_visible()
    assert read(site, "user/work/gone").status_code == 404
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("heading", name="gone", exact=True)).to_be_visible()
    assert read(site, "user/work/gone").json()["content"] == "- [stated] New.\n"


def test_a_stale_delete_is_refused_and_shows_the_current_file(
    page: Page, site: Site
) -> None:
    first = write(site, "user/work/draft", "- [stated] Draft.\n")
    sign_in(page, site)
    open_file(page, site, "user/work/draft")
    expect(page.get_by_role("heading", name="draft", exact=True)).to_be_visible()
    with site.api(site.other_writer) as http:
        changed = http.post(
            "/files/user/work/draft/lines",
            json={"line": "- [stated] Kept."},
            headers={"If-Match": f'"{first["version"]}"'},
        )
    assert changed.status_code == 200, changed.text

    page.get_by_role("button", name="Delete…").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()

    expect(page.get_by_role("alert")).to_contain_text("VERSION_CONFLICT")
    expect(page.locator(".markdown")).to_contain_text("Kept.")
    assert read(site, "user/work/draft").status_code == 200


def test_delete_then_restore_from_history(page: Page, site: Site) -> None:
    write(site, "user/work/temp", "- [stated] Keep me.\n", description="Temp.")
    sign_in(page, site)
    open_file(page, site, "user/work/temp")
    page.get_by_role("button", name="Delete…").click()
    check_page(page, "delete-dialog")
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="Memory index")).to_be_visible()
    assert read(site, "user/work/temp").status_code == 404

    open_file(page, site, "user/work/temp", "history")
    expect(page.get_by_role("heading", name="History of temp")).to_be_visible()
    expect(page.locator("tr.tombstone")).to_have_count(1)
    expect(page.locator("figure.diff del")).to_contain_text("Keep me.")
    expect(page.locator("figure.diff ins")).to_have_count(0)
    check_page(page, "history")
    page.locator("tr:not(.tombstone)").get_by_role(
        "button", name=re.compile("^Restore")
    ).first.click()

    expect(page.get_by_role("heading", name="temp", exact=True)).to_be_visible()
    restored = read(site, "user/work/temp").json()
    assert (restored["content"], restored["description"]) == (
        "- [stated] Keep me.\n",
        "Temp.",
    )


def test_history_diffs_two_versions(page: Page, site: Site) -> None:
    first = write(site, "user/work/diffed", "- [stated] Alpha.\n- [stated] Beta.\n")
    with site.api() as http:
        http.put(
            "/files/user/work/diffed",
            headers={"If-Match": f'"{first["version"]}"'},
            json={
                "content": "- [stated] Alpha.\n- [stated] Gamma.\n",
                "description": "",
                "aliases": [],
            },
        ).raise_for_status()
    sign_in(page, site)
    open_file(page, site, "user/work/diffed", "history")
    diff = page.locator("figure.diff")
    expect(diff.locator("del")).to_contain_text("Beta.")
    expect(diff.locator("ins")).to_contain_text("Gamma.")
    screenshot(page, "history-diff")


def test_search_highlights_matches(page: Page, site: Site) -> None:
    write(
        site,
        "user/trips/kyoto",
        "- [stated] Visited Kyoto in spring for the temples.\n",
        description="Trip to Kyoto.",
    )
    sign_in(page, site)
    page.get_by_role("navigation", name="Main").get_by_role(
        "link", name="Search"
    ).click()
    page.get_by_label("Search memories").fill("temples")
    page.get_by_role("button", name="Search", exact=True).click()

    result = page.locator(".hit").filter(has=page.get_by_role("link", name="kyoto"))
    expect(result.locator("mark").first).to_have_text(re.compile("temples", re.I))
    check_page(page, "search")
    result.get_by_role("link", name="kyoto").click()
    expect(page.get_by_role("heading", name="kyoto", exact=True)).to_be_visible()


def test_a_files_audit_trail_lists_its_reads_writes_and_refusals(
    page: Page, site: Site
) -> None:
    write(site, "user/work/audited", "- [stated] Watched.\n")
    read(site, "user/work/audited")
    with site.api(site.other_writer) as http:
        stale = http.put(
            "/files/user/work/audited",
            json={"content": "x", "description": "", "aliases": []},
            headers={"If-Match": '"not-the-version"'},
        )
    assert stale.status_code == 412
    sign_in(page, site)
    open_file(page, site, "user/work/audited", "audit")
    table = page.get_by_role("table", name="Events of audited")
    expect(table.get_by_role("cell", name="write_file").first).to_be_visible()
    expect(table.get_by_role("cell", name="read_file").first).to_be_visible()
    refused = table.get_by_role("row").filter(has_text="VERSION_CONFLICT")
    expect(refused).to_contain_text("other-agent")
    expect(page.get_by_role("button", name="Older events")).to_be_hidden()
    check_page(page, "audit")


HOSTILE_CONTENT = """# Hello

<img src=x onerror="window.__xss_img = 1">
<script>window.__xss_script = 1</script>
<svg onload="window.__xss_svg = 1"></svg>
<div style="background:url(javascript:window.__xss_style=1)">styled</div>

[click me](javascript:window.__xss_link=1)

<a href="data:text/html,<script>parent.__xss_data=1</script>">data link</a>

[safe](https://example.com/)
"""
HOSTILE_NAME = '<img src=x onerror="window.__xss_name=1">'


def test_a_hostile_file_renders_as_text_and_runs_no_script(
    page: Page, site: Site
) -> None:
    write(
        site,
        f"user/xss/{HOSTILE_NAME}",
        HOSTILE_CONTENT,
        description='<img src=x onerror="window.__xss_desc=1">',
        aliases=["<script>window.__xss_alias=1</script>"],
    )
    sign_in(page, site)
    expect(
        page.get_by_text('<img src=x onerror="window.__xss_desc=1">')
    ).to_be_visible()
    page.get_by_role("link", name=HOSTILE_NAME).click()
    expect(page.get_by_role("heading", name=HOSTILE_NAME)).to_be_visible()

    rendered = page.locator(".markdown")
    expect(
        rendered.locator("script, img, svg, [onerror], [onload], [style]")
    ).to_have_count(0)
    expect(rendered.get_by_text("click me")).to_be_visible()
    expect(rendered.locator("a[href^='javascript'], a[href^='data']")).to_have_count(0)
    expect(rendered.get_by_role("link", name="safe")).to_have_attribute(
        "rel", re.compile("noopener")
    )
    screenshot(page, "xss-rendered")
    rendered.get_by_text("click me").click()
    rendered.get_by_text("data link").click()
    page.get_by_role("button", name="Raw text").click()
    expect(page.get_by_label("Raw text")).to_contain_text(
        "<script>window.__xss_script = 1</script>"
    )
    check_page(page, "xss")
    page.goto(f"{site.server.url}/ui/#/search?q=hello")
    expect(page.locator(".hit").first).to_contain_text("<img")

    for name in XSS_GLOBALS:
        assert page.evaluate(f"() => typeof window.{name}") == "undefined", name


def test_every_action_works_from_the_keyboard(page: Page, site: Site) -> None:
    """Create, read raw, append to and delete a file with Tab, typing and Enter."""
    sign_in(page, site)
    tab_to(page, "New file")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="New file")).to_be_visible()
    for label, text in (
        ("Area", "keys"),
        ("Name", "typed"),
        ("Description", "By keyboard."),
    ):
        tab_to(page, label)
        page.keyboard.type(text)
    tab_to(page, "Content (markdown)")
    page.keyboard.type("- [stated] Typed.")
    tab_to(page, "Create")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="typed", exact=True)).to_be_visible()
    assert read(site, "user/keys/typed").json()["content"] == "- [stated] Typed."

    tab_to(page, "Raw text")
    page.keyboard.press("Enter")
    expect(page.get_by_label("Raw text")).to_be_visible()
    tab_to(page, "Fact")
    page.keyboard.type("Appended by keyboard.")
    tab_to(page, "Append")
    page.keyboard.press("Enter")
    expect(page.locator(".markdown")).to_contain_text("Appended by keyboard.")
    expect(page.get_by_role("heading", name="typed", exact=True)).to_be_focused()

    tab_to(page, "Delete…")
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    tab_to(page, "Delete")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Memory index")).to_be_visible()
    assert read(site, "user/keys/typed").status_code == 404


def focused_name(page: Page) -> str:
    return page.evaluate(
        """() => {
            const el = document.activeElement;
            if (!el) return "";
            if (el.labels && el.labels.length) return el.labels[0].textContent.trim();
            return (el.getAttribute("aria-label") || el.textContent || "").trim();
        }"""
    )


def tab_to(page: Page, name: str, limit: int = 60) -> None:
    """Press Tab until the focused control is called ``name`` (and it shows focus)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if focused_name(page) == name:
            outline = page.evaluate(
                "() => getComputedStyle(document.activeElement).outlineStyle"
            )
            assert outline != "none", f"{name} has no visible focus"
            return
    raise AssertionError(f"Tab never reached {name!r}")


@contextmanager
def another_origin() -> Generator[str]:
    """A page on another origin (another loopback port) that a person might visit."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>elsewhere</title><p>elsewhere</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


FORGE = r"""async (api) => {
  const outcomes = {};
  try {
    const response = await fetch(api + "/v1/files/user/forged/by-fetch", {
      method: "PUT", credentials: "include",
      headers: {"Content-Type": "application/json", "If-None-Match": "*"},
      body: JSON.stringify({content: "Forged.", description: "", aliases: []}),
    });
    outcomes.fetch = response.status;
  } catch (error) {
    outcomes.fetch = "refused";
  }
  try {
    const response = await fetch(api + "/v1/files/user/forged/by-form/lines", {
      method: "POST", mode: "no-cors", credentials: "include",
      headers: {"Content-Type": "text/plain"}, body: "line=- [stated] Forged.",
    });
    outcomes.simple = response.type;
  } catch (error) {
    outcomes.simple = "refused";
  }
  outcomes.stored = sessionStorage.length;
  return outcomes;
}"""


def test_another_origin_cannot_change_memory_for_a_signed_in_person(
    browser: Browser, site: Site
) -> None:
    """With the person signed in, a page elsewhere forges writes: none lands."""
    write(site, "user/forged/by-form", "- [stated] Original.\n")
    context = browser.new_context()
    try:
        person = context.new_page()
        sign_in(person, site)
        with another_origin() as elsewhere:
            attacker = context.new_page()
            attacker.goto(elsewhere)
            outcomes = attacker.evaluate(FORGE, site.server.url)
    finally:
        context.close()

    assert outcomes == {"fetch": "refused", "simple": "opaque", "stored": 0}
    assert read(site, "user/forged/by-fetch").status_code == 404
    assert (
        read(site, "user/forged/by-form").json()["content"] == "- [stated] Original.\n"
    )


def test_a_revoked_token_returns_the_person_to_sign_in(page: Page, site: Site) -> None:
    secret, token_id = site.revocable
    write(site, "user/prefs/revoked", "- [stated] Seen once.\n")
    sign_in(page, site, secret)
    assert revoke_token(site.tokens, token_id)
    with site.api(secret) as http:
        for _ in range(200):  # the server re-reads its token file within a second
            if http.get("/index").status_code == 401:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the revoked token still works")

    open_file(page, site, "user/prefs/revoked")

    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("no longer accepted")
    assert page.evaluate("() => sessionStorage.length") == 0


def test_sign_out_forgets_the_token(page: Page, site: Site) -> None:
    sign_in(page, site)
    page.get_by_role("button", name="Sign out").click()

    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.evaluate("() => sessionStorage.length") == 0
    page.reload()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    open_file(page, site, "user/prefs/drinks")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


def test_ui_files_ship_in_the_wheel(tmp_path: Path) -> None:
    """The wheel carries the static files (package data): no build step for anyone."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv builds the wheel")
    root = Path(__file__).resolve().parents[1]
    built = subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(tmp_path), str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    static = "app/server/ui/static/"
    expected = {
        "index.html",
        "js/main.js",
        "js/views/edit.js",
        "css/app.css",
        "vendor/purify.es.js",
        "vendor/marked.esm.js",
        "vendor/dompurify.LICENSE.txt",
    }
    assert {static + name for name in expected} <= names


def test_dark_mode_follows_the_system_setting(browser: Browser, site: Site) -> None:
    context = browser.new_context(
        color_scheme="dark", viewport={"width": 1200, "height": 820}
    )
    try:
        tab = context.new_page()
        write(
            site,
            "user/prefs/evening",
            "# Evening\n\n- [stated] Reads **late**.\n",
            description="Evening habits.",
            aliases=["night"],
        )
        sign_in(tab, site)
        background = tab.evaluate(
            "() => getComputedStyle(document.body).backgroundColor"
        )
        red, green, blue = (int(n) for n in re.findall(r"\d+", background)[:3])
        assert max(red, green, blue) < 64, background
        check_page(tab, "index-dark")
        open_file(tab, site, "user/prefs/evening")
        expect(tab.get_by_role("heading", name="evening", exact=True)).to_be_visible()
        check_page(tab, "file-dark")
    finally:
        context.close()


def test_a_phone_sized_screen_needs_no_sideways_scrolling(
    browser: Browser, site: Site
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        tab = context.new_page()
        long_line = "- [stated] " + "a-very-long-unbroken-word" * 12 + "\n"
        write(
            site,
            "user/phone/long",
            long_line + "| a | b |\n|---|---|\n| 1 | 2 |\n",
            description="A file with a long line.",
            aliases=["x" * 80],
        )
        sign_in(tab, site)
        for path in ("user/phone/long",):
            open_file(tab, site, path)
            expect(
                tab.get_by_role("heading", name=path.split("/")[-1], exact=True)
            ).to_be_visible()
            overflow = tab.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, f"{path} overflows by {overflow}px"
        check_page(tab, "file-phone")
    finally:
        context.close()


def test_rename_moves_the_file_and_its_history(page: Page, site: Site) -> None:
    write(site, "user/work/oldname", "- [stated] Moving.\n")
    sign_in(page, site)
    open_file(page, site, "user/work/oldname")
    page.get_by_role("button", name="Rename…").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Area").fill("projects")
    dialog.get_by_label("Name").fill("newname")
    check_page(page, "rename-dialog")
    dialog.get_by_role("button", name="Rename").click()

    expect(page.get_by_role("heading", name="newname", exact=True)).to_be_visible()
    assert read(site, "user/work/oldname").status_code == 404
    moved = read(site, "user/projects/newname")
    assert moved.json()["content"] == "- [stated] Moving.\n"
