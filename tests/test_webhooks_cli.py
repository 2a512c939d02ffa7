"""`wenchang webhook add|list|enable|remove` on the configured storage.

docs/changes.md: an operator manages an entity's webhooks from the command
line; an endpoint added there is delivered to by the servers on that storage,
and refusals (an unsafe URL, an unknown id) exit 1 with the reason.
"""

import json
from pathlib import Path

from standardwebhooks.webhooks import Webhook

from tests.support.server import alice_on_sqlite, run_wenchang, running_server
from tests.support.webhook_receiver import running_receiver
from tests.test_webhooks_delivery import TRUSTED, write


def test_an_endpoint_added_by_the_cli_is_delivered_to_and_removed(
    tmp_path: Path,
) -> None:
    token, settings = alice_on_sqlite(tmp_path, **TRUSTED)
    entity = ("--entity", "alice")
    with running_receiver() as receiver:
        added = run_wenchang(
            "webhook",
            "add",
            "user",
            receiver.url,
            *entity,
            cwd=tmp_path,
            settings=settings,
        )
        assert added.returncode == 0, added.stderr
        created = json.loads(added.stdout)
        with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as one:
            write(one.url, token, "tea")
            receiver.wait_for(lambda r: len(r.accepted()) == 1)
        delivery = receiver.accepted()[0]
        Webhook(created["secret"]).verify(delivery.body, delivery.headers)
    listed = run_wenchang(
        "webhook", "list", "user", *entity, cwd=tmp_path, settings=settings
    )
    [hook] = json.loads(listed.stdout)["webhooks"]
    assert hook["id"] == created["id"]
    assert hook["delivery"]["last_delivered_at"] is not None
    assert "secret" not in hook
    enabled = run_wenchang(
        "webhook",
        "enable",
        "user",
        created["id"],
        *entity,
        cwd=tmp_path,
        settings=settings,
    )
    assert json.loads(enabled.stdout)["delivery"]["status"] == "active"
    removed = run_wenchang(
        "webhook",
        "remove",
        "user",
        created["id"],
        *entity,
        cwd=tmp_path,
        settings=settings,
    )
    assert removed.returncode == 0
    again = run_wenchang(
        "webhook",
        "remove",
        "user",
        created["id"],
        *entity,
        cwd=tmp_path,
        settings=settings,
    )
    assert again.returncode == 1
    assert "No webhook" in again.stdout


def test_the_cli_refuses_an_unsafe_url(tmp_path: Path) -> None:
    _, settings = alice_on_sqlite(tmp_path)
    refused = run_wenchang(
        "webhook",
        "add",
        "user",
        "https://169.254.169.254/latest",
        "--entity",
        "alice",
        cwd=tmp_path,
        settings=settings,
    )
    assert refused.returncode == 1
    assert "url" in refused.stdout
    listed = run_wenchang(
        "webhook", "list", "user", "--entity", "alice", cwd=tmp_path, settings=settings
    )
    assert json.loads(listed.stdout) == {"webhooks": []}
