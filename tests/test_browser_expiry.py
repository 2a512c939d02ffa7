"""Expiry in the memory browser: shown on files, set and cleared in the editor, and
an owner's "show expired files" toggle that lists and opens expired files.

docs/browser.md and docs/lifecycle.md: the index and a file show when a file
expires; the editor's Expires field sets, keeps or clears it; an owner who
turns on "Show expired files" sees expired files (marked expired) and can open
them (to read: nothing offers to change them), which nobody else can.
"""

from typing import Any

from playwright.sync_api import Page, expect

from tests.support.browser import check_page
from tests.test_browser_ui import Site, open_file, read, sign_in

# The browser suite's fixtures, shared: one module-scoped server and browser.
from tests.test_browser_ui import browser as browser
from tests.test_browser_ui import page as page
from tests.test_browser_ui import site as site

PAST = "2020-01-01T00:00:00Z"
LATER = "2999-01-01T00:00:00Z"


def put(site: Site, path: str, **expiry: Any) -> None:
    body: dict[str, Any] = {
        "content": "- [stated] x\n",
        "description": "",
        "aliases": [],
        **expiry,
    }
    with site.api() as http:
        made = http.put(f"/files/{path}", json=body, headers={"If-None-Match": "*"})
    assert made.status_code == 201, made.text


def test_the_index_shows_expiry_and_an_owner_may_show_expired_files(
    page: Page, site: Site
) -> None:
    put(site, "user/scratch/old-note", expires_at=PAST)
    put(site, "user/scratch/later-note", expires_at=LATER)
    sign_in(page, site)

    main = page.get_by_role("main")
    later = page.locator(".file-row", has_text="later-note")
    expect(later.locator(".expiry")).to_contain_text("Expires")
    expect(main.get_by_role("link", name="old-note")).to_have_count(0)

    page.get_by_label("Show expired files (scope owners)").check()
    old = page.locator(".file-row", has_text="old-note")
    expect(old.locator(".expiry.expired")).to_contain_text("Expired")
    check_page(page, "index-with-expired")
    main.get_by_role("link", name="old-note").click()
    expect(page.locator("#expired-notice")).to_contain_text("This file has expired")
    expect(page.locator(".meta")).to_contain_text("Expires")
    expect(page.get_by_role("button", name="Append")).to_have_count(0)
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)

    page.goto(f"{site.server.url}/ui/#/")
    page.get_by_label("Show expired files (scope owners)").uncheck()
    expect(page.get_by_role("link", name="later-note")).to_be_visible()
    expect(main.get_by_role("link", name="old-note")).to_have_count(0)


def test_the_editor_sets_and_clears_an_expiry(page: Page, site: Site) -> None:
    sign_in(page, site)
    page.get_by_role("main").get_by_role("link", name="New file").click()
    page.get_by_label("Area").fill("trips")
    page.get_by_label("Name").fill("visa")
    page.get_by_label("Content (markdown)").fill("- [stated] Visa until spring.\n")
    page.get_by_label("Expires").fill("2999-01-02T03:04:05")
    check_page(page, "create-with-expiry")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="visa", exact=True)).to_be_visible()

    expected = page.evaluate("new Date('2999-01-02T03:04:05').toISOString()")
    stored = read(site, "user/trips/visa").json()
    assert stored["expires_at"] == expected.replace(".000Z", "Z")
    expect(page.locator(".meta")).to_contain_text("Expires")

    open_file(page, site, "user/trips/visa", "edit")
    expect(page.get_by_label("Expires")).not_to_have_value("")
    page.get_by_label("Description").fill("Visa dates.")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="visa", exact=True)).to_be_visible()
    assert read(site, "user/trips/visa").json()["expires_at"] == stored["expires_at"]

    open_file(page, site, "user/trips/visa", "edit")
    page.get_by_label("Expires").fill("")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="visa", exact=True)).to_be_visible()
    cleared = read(site, "user/trips/visa").json()
    assert "expires_at" not in cleared and cleared["description"] == "Visa dates."
