"""The memory browser's "Export as markdown (zip)": a download of the signed-in
person's own files as the markdown tree (docs/browser.md, docs/markdown.md)."""

import zipfile
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.test_browser_ui import Site, sign_in, write

# The browser suite's fixtures, shared: one module-scoped server and browser.
from tests.test_browser_ui import browser as browser
from tests.test_browser_ui import page as page
from tests.test_browser_ui import site as site


def test_export_as_markdown_downloads_a_zip_of_the_own_files(
    page: Page, site: Site, tmp_path: Path
) -> None:
    written = write(
        site, "user/export/zip me ☕", "- [stated] 日本語\n", description="d"
    )
    sign_in(page, site)

    with page.expect_download() as download:
        page.get_by_role("button", name="Export as markdown (zip)").click()
    saved = tmp_path / "export.zip"
    download.value.save_as(saved)

    assert download.value.suggested_filename == "wenchang-memory.zip"
    archive = zipfile.ZipFile(saved)
    text = archive.read("user/export/zip me ☕.md").decode()
    assert text.startswith("---\ndescription: d\n")
    assert written["version"] in text
    assert text.endswith("\n---\n- [stated] 日本語\n")
    expect(page.locator("#status")).to_contain_text("Markdown export downloaded")
