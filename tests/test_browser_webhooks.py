"""The memory browser's Webhooks page: add (the secret shown once), the delivery
state of each endpoint, enable a failed one, remove one.

docs/browser.md and docs/changes.md: the page calls only /v1/webhooks; a
failing endpoint shows its state and last error, and Enable resumes it; changes
no longer kept by then are skipped, and the page says so.
"""

import sqlite3
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from app.infra.tokens.token_file import create_token
from app.shared.identity import Grant
from tests.support.browser import check_page
from tests.support.server import ServerProcess, running_server
from tests.support.webhook_receiver import Receiver, running_receiver

# The browser suite's browser and tab fixtures.
from tests.test_browser_ui import browser as browser
from tests.test_browser_ui import page as page


@dataclass(frozen=True, slots=True)
class HookSite:
    server: ServerProcess
    owner: str
    receiver: Receiver
    database: Path


@pytest.fixture(scope="module")
def hook_site(tmp_path_factory: pytest.TempPathFactory) -> Generator[HookSite]:
    directory = tmp_path_factory.mktemp("browser-webhooks")
    tokens = directory / "tokens.json"
    owner, _ = create_token(tokens, {"user": Grant("ada", "owner")}, label="ada")
    settings = {
        "WENCHANG_TOKENS_FILE": str(tokens),
        "WENCHANG_STORAGE": f"sqlite:///{directory / 'memory.db'}",
        "WENCHANG_WEBHOOK_TRUSTED_HOSTS": "127.0.0.1",
        "WENCHANG_WEBHOOK_RETRY_BASE": "0.1",
        "WENCHANG_WEBHOOK_RETRY_WINDOW": "0.3",
    }
    logs = Path(tmp_path_factory.mktemp("browser-webhook-logs"))
    with (
        running_receiver() as receiver,
        running_server(directory, logs=logs, settings=settings) as server,
    ):
        yield HookSite(server, owner, receiver, directory / "memory.db")


def put(site: HookSite, name: str) -> None:
    with httpx.Client(base_url=site.server.url) as http:
        written = http.put(
            f"/v1/files/user/notes/{name}",
            json={"content": f"- [stated] {name}.\n", "description": "", "aliases": []},
            headers={"Authorization": f"Bearer {site.owner}", "If-None-Match": "*"},
        )
    assert written.status_code == 201


def test_add_watch_fail_enable_and_remove_a_webhook(
    page: Page, hook_site: HookSite
) -> None:
    site = hook_site
    site.receiver.fail_next(1_000_000)
    page.goto(f"{site.server.url}/ui/")
    page.get_by_label("Token").fill(site.owner)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
    page.get_by_label("URL").fill(site.receiver.url)
    page.get_by_label("Description").fill("ci hook")
    page.get_by_role("button", name="Add webhook").click()
    expect(page.locator("code.secret")).to_contain_text("whsec_")
    table = page.get_by_role("table", name="Webhooks of scope user")
    expect(table).to_contain_text("ci hook")
    put(site, "tea")
    site.receiver.wait_for(lambda r: len(r.all()) >= 2, "failed attempts")
    failed = page.locator("[data-status=failed]")
    for _ in range(600):  # the page shows the state as of its last load
        if failed.count():
            break
        page.reload()
        expect(table).to_be_visible()
    expect(table).to_contain_text("HTTP 500")
    check_page(page, "webhooks")
    expect(page.locator("[data-skipped]")).to_have_count(0)
    put(site, "coffee")
    # Eight days pass for tea's change while the endpoint is failed.
    with sqlite3.connect(site.database) as db:
        db.execute(
            "UPDATE memory_changes SET at = '2020-01-01T00:00:00Z' "
            "WHERE seq = (SELECT min(seq) FROM memory_changes)"
        )
    site.receiver.fail_next(0)
    page.get_by_role("button", name="Enable").click()
    site.receiver.wait_for(lambda r: len(r.accepted()) == 1)
    assert site.receiver.accepted()[0].data["name"] == "coffee"
    page.reload()
    expect(page.locator("[data-status=active]")).to_be_visible()
    expect(page.locator("[data-skipped]")).to_contain_text("Missed changes")
    page.get_by_role("button", name="Remove").click()
    expect(table).to_contain_text("No webhooks yet.")
