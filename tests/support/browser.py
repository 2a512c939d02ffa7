"""A real headless Chromium (Debian's, driven by Playwright) for the browser tests.

No browser is downloaded: Playwright launches the system's ``chromium``. Pages are
checked with axe-core (the script its PyPI package ships) and photographed into
``test-artifacts/browser/`` so a person can look at what the tests saw.
"""

import os
import shutil
from collections.abc import Generator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
SERIOUS = {"serious", "critical"}


def chromium_path() -> str:
    """The system Chromium; CI must have it, elsewhere the browser tests skip."""
    for candidate in (os.environ.get("WENCHANG_CHROMIUM"), *CHROMIUM_CANDIDATES):
        if candidate and Path(candidate).exists():
            return candidate
    found = shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (.ci/run installs Debian's package)")
    pytest.skip("chromium is not installed: apt-get install chromium")


@contextmanager
def running_chromium() -> Generator[Browser]:
    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=list(CHROMIUM_ARGS), timeout=60_000
        )
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def axe_source() -> str:
    return (files("axe_playwright_python") / "axe.min.js").read_text()


def serious_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it stands."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    raw = page.evaluate("async () => (await window.axe.run(document)).violations")
    violations = cast(list[dict[str, Any]], raw)
    return [v for v in violations if v.get("impact") in SERIOUS]


def describe(violations: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for violation in violations:
        nodes = cast(list[dict[str, Any]], violation.get("nodes", []))
        targets = [str(node.get("target")) for node in nodes[:3]]
        lines.append(f"{violation.get('id')}: {violation.get('help')} at {targets}")
    return "\n".join(lines)


def check_page(page: Page, name: str) -> None:
    """Photograph the page, then require no serious accessibility violation."""
    screenshot(page, name)
    violations = serious_violations(page)
    assert not violations, f"{name}:\n{describe(violations)}"
