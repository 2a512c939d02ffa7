"""The memory browser shows at once that someone else changed the open file.

docs/browser.md: an open file watches the change feed; another writer's change
to it brings a notice naming who changed it and a way to the new version; the
page's own edits do not. A file open in the editor shows it too, keeps what the
person typed, and leads into the merge view before saving.
"""

from playwright.sync_api import Page, expect

from tests.support.browser import check_page
from tests.test_browser_ui import Site, open_file, read, sign_in, write

# The browser suite's fixtures, shared: one module-scoped server and browser.
from tests.test_browser_ui import browser as browser
from tests.test_browser_ui import page as page
from tests.test_browser_ui import site as site


def append_as_other_agent(site: Site, path: str, line: str, version: str) -> str:
    """Another agent appends ``line`` to the file at ``path`` (at ``version``);
    the file's version after it."""
    with site.api(site.other_writer) as http:
        changed = http.post(
            f"/files/{path}/lines",
            json={"line": line},
            headers={"If-Match": f'"{version}"'},
        )
    assert changed.status_code == 200, changed.text
    return changed.json()["version"]


def test_an_open_file_shows_that_someone_else_changed_it(
    page: Page,
    site: Site,
) -> None:
    first = write(site, "user/live/plan", "- [stated] Plan A.\n")
    sign_in(page, site)
    open_file(page, site, "user/live/plan")
    expect(page.locator(".markdown")).to_contain_text("Plan A.")
    page.get_by_role("textbox", name="Fact").fill("Mine.")
    page.get_by_role("button", name="Append").click()
    expect(page.locator(".markdown")).to_contain_text("Mine.")
    mine = page.locator("code.version").inner_text()
    assert mine != first["version"]
    expect(page.locator("#changed-notice")).to_have_count(0)

    append_as_other_agent(site, "user/live/plan", "- [stated] Plan B.", mine)

    notice = page.locator("#changed-notice")
    expect(notice).to_contain_text("changed by other-agent (append_line)")
    check_page(page, "file-changed-elsewhere")
    page.get_by_role("button", name="Show the current version").click()
    expect(page.locator(".markdown")).to_contain_text("Plan B.")
    expect(page.locator("#changed-notice")).to_have_count(0)


def test_a_file_being_edited_shows_someone_elses_change_and_merges(
    page: Page,
    site: Site,
) -> None:
    first = write(site, "user/live/draft", "- [stated] Draft A.\n")
    sign_in(page, site)
    # The editor's watch starts from the moment its stream is answered.
    with page.expect_response(lambda response: "/v1/changes" in response.url):
        open_file(page, site, "user/live/draft", "edit")
    editor = page.get_by_label("Content (markdown)")
    mine = "- [stated] Draft A.\n- [stated] Mine.\n"
    editor.fill(mine)
    expect(page.locator("#changed-notice")).to_have_count(0)

    theirs = append_as_other_agent(
        site, "user/live/draft", "- [stated] Theirs.", first["version"]
    )

    notice = page.locator("#changed-notice")
    expect(notice).to_contain_text("changed by other-agent (append_line)")
    expect(editor).to_have_value(mine)
    check_page(page, "edited-file-changed-elsewhere")
    page.get_by_role("button", name="Show their version to merge").click()
    expect(page.get_by_role("textbox", name="Their content")).to_have_value(
        "- [stated] Draft A.\n- [stated] Theirs.\n"
    )
    expect(editor).to_have_value(mine)
    page.get_by_role("button", name="Save merged version").click()
    expect(page.get_by_role("heading", name="draft", exact=True)).to_be_visible()
    saved = read(site, "user/live/draft").json()
    assert saved["content"] == mine
    assert saved["version"] != theirs
