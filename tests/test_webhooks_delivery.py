"""Webhooks delivered by `wenchang serve` processes to a receiver on loopback.

docs/changes.md: each change reaches a registered endpoint signed as Standard
Webhooks says (checked here with the ``standardwebhooks`` package), with the
same ``webhook-id`` on every attempt; failed attempts are retried with backoff,
also by a process started after the first one stopped; failures lasting the
retry window leave the endpoint failed (listed so) until it is enabled again;
two processes on one SQLite file, or on one GCS bucket, deliver every change,
none skipped.
"""

import sqlite3
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from tests.support.server import alice_on_sqlite, running_server, running_servers
from tests.support.storage_adapters import storage_url
from tests.support.webhook_receiver import Receiver, running_receiver

TRUSTED = {"WENCHANG_WEBHOOK_TRUSTED_HOSTS": "127.0.0.1"}


@pytest.fixture
def receiver() -> Generator[Receiver]:
    with running_receiver() as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def add(url: str, token: str, target: str) -> dict[str, Any]:
    answer = httpx.post(
        f"{url}/v1/webhooks/user", json={"url": target}, headers=bearer(token)
    )
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def listed(url: str, token: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{url}/v1/webhooks/user", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    hooks: list[dict[str, Any]] = answer.json()["webhooks"]
    return hooks


def write(url: str, token: str, name: str) -> str:
    answer = httpx.put(
        f"{url}/v1/files/user/hooks/{name}",
        json={"content": f"- [stated] {name}.\n", "description": name, "aliases": []},
        headers=bearer(token) | {"If-None-Match": "*"},
    )
    assert answer.status_code == 201, answer.text
    version: str = answer.json()["version"]
    return version


def test_a_change_is_delivered_signed_as_standard_webhooks_says(
    tmp_path: Path, receiver: Receiver
) -> None:
    token, settings = alice_on_sqlite(tmp_path, **TRUSTED)
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as one:
        created = add(one.url, token, receiver.url)
        assert created["secret"].startswith("whsec_")
        version = write(one.url, token, "tea")
        receiver.wait_for(lambda r: len(r.accepted()) == 1)
    delivery = receiver.accepted()[0]
    payload = Webhook(created["secret"]).verify(delivery.body, delivery.headers)
    assert payload["type"] == "memory.changed"
    assert payload["data"]["name"] == "tea"
    assert payload["data"]["version"] == version
    assert payload["data"]["operation"] == "write_file"
    assert delivery.headers["webhook-id"].startswith(f"msg_{created['id']}_")
    with pytest.raises(Exception):  # noqa: B017 (any refusal of a wrong secret)
        Webhook("whsec_" + "A" * 32).verify(delivery.body, delivery.headers)


def test_retries_keep_the_id_and_survive_a_restart(
    tmp_path: Path, receiver: Receiver
) -> None:
    token, settings = alice_on_sqlite(
        tmp_path, WENCHANG_WEBHOOK_RETRY_BASE="1s", **TRUSTED
    )
    logs = tmp_path / "logs"
    receiver.fail_next(3)
    with running_server(tmp_path, logs=logs, settings=settings) as first:
        created = add(first.url, token, receiver.url)
        write(first.url, token, "tea")
        receiver.wait_for(lambda r: len(r.all()) >= 1, "a first attempt")
        state = listed(first.url, token)[0]["delivery"]
    assert state["status"] == "retrying"
    assert "500" in state["last_error"]
    with running_server(tmp_path, logs=logs, settings=settings) as second:
        receiver.wait_for(lambda r: len(r.accepted()) == 1)
        after = listed(second.url, token)[0]["delivery"]
    attempts = receiver.all()
    assert [d.answered for d in attempts] == [500, 500, 500, 200]
    assert len({d.headers["webhook-id"] for d in attempts}) == 1
    for delivery in attempts:
        Webhook(created["secret"]).verify(delivery.body, delivery.headers)
    assert after["status"] == "active"
    assert after["attempts"] == 0


def test_failures_for_the_retry_window_fail_the_endpoint_until_enabled(
    tmp_path: Path, receiver: Receiver
) -> None:
    token, settings = alice_on_sqlite(
        tmp_path,
        WENCHANG_WEBHOOK_RETRY_BASE="0.2",
        WENCHANG_WEBHOOK_RETRY_WINDOW="1",
        **TRUSTED,
    )
    receiver.fail_next(1_000_000)
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as one:
        created = add(one.url, token, receiver.url)
        write(one.url, token, "tea")
        deadline_hooks: list[dict[str, Any]] = []

        def failed(_: Receiver) -> bool:
            deadline_hooks[:] = listed(one.url, token)
            return deadline_hooks[0]["delivery"]["status"] == "failed"

        receiver.wait_for(failed, "a failed state")
        state = deadline_hooks[0]["delivery"]
        assert state["failed_at"] is not None
        assert state["next_attempt_at"] is None
        tried = len(receiver.all())
        receiver.fail_next(0)
        answer = httpx.post(
            f"{one.url}/v1/webhooks/user/{created['id']}/enable", headers=bearer(token)
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["delivery"]["status"] == "active"
        receiver.wait_for(lambda r: len(r.accepted()) == 1)
    assert tried >= 2
    assert receiver.accepted()[0].data["name"] == "tea"


def test_changes_pruned_while_retrying_are_skipped_and_listed_as_such(
    tmp_path: Path, receiver: Receiver
) -> None:
    token, settings = alice_on_sqlite(
        tmp_path, WENCHANG_WEBHOOK_RETRY_BASE="1s", **TRUSTED
    )
    receiver.fail_next(1_000_000)
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as one:
        write(one.url, token, "before")
        add(one.url, token, receiver.url)
        write(one.url, token, "tea")
        receiver.wait_for(lambda r: len(r.all()) >= 1, "a first attempt")
        # Eight days pass for tea's change (the clock is the server's own).
        with sqlite3.connect(tmp_path / "wenchang.db") as db:
            db.execute(
                "UPDATE memory_changes SET at = '2020-01-01T00:00:00Z' "
                "WHERE seq = (SELECT max(seq) FROM memory_changes)"
            )
        write(one.url, token, "coffee")

        states: list[dict[str, Any]] = []

        def skipped(_: Receiver) -> bool:
            states[:] = [listed(one.url, token)[0]["delivery"]]
            return states[0]["skipped_at"] is not None

        receiver.wait_for(skipped, "a skip in the listing")
        retrying = states[0]
        receiver.fail_next(0)
        receiver.wait_for(lambda r: len(r.accepted()) == 1)
        state = listed(one.url, token)[0]["delivery"]
    assert {d.data["name"] for d in receiver.all()} == {"tea", "coffee"}
    assert receiver.accepted()[0].data["name"] == "coffee"
    assert retrying["status"] == "retrying"
    assert state["status"] == "active"
    assert state["skipped_at"] == retrying["skipped_at"]
    assert state["skipped_at"] <= state["last_delivered_at"]


@pytest.mark.parametrize("kind", ["sqlite", "gcs"])
def test_two_processes_on_one_storage_deliver_every_change(
    tmp_path: Path, receiver: Receiver, kind: str, request: pytest.FixtureRequest
) -> None:
    token, settings = alice_on_sqlite(tmp_path, **TRUSTED)
    settings["WENCHANG_RATE_LIMIT"] = "0"
    if kind == "gcs":
        request.getfixturevalue("gcs_emulator")
        settings["WENCHANG_STORAGE"] = storage_url("gcs", tmp_path)
    with running_servers(2, tmp_path, settings=settings) as (one, two):
        add(one.url, token, receiver.url)
        names = [f"n{i}" for i in range(12)]
        for i, name in enumerate(names):
            write((one, two)[i % 2].url, token, name)
        receiver.wait_for(
            lambda r: {d.data["name"] for d in r.accepted()} == set(names)
        )
    delivered = receiver.accepted()
    seqs = sorted({int(d.headers["webhook-id"].rsplit("_", 1)[1]) for d in delivered})
    assert seqs == list(range(seqs[0], seqs[0] + len(names)))
    firsts: list[str] = []
    for delivery in delivered:
        if delivery.data["name"] not in firsts:
            firsts.append(delivery.data["name"])
    assert firsts == names


def test_a_loopback_destination_is_refused_at_delivery_once_untrusted(
    tmp_path: Path, receiver: Receiver
) -> None:
    token, settings = alice_on_sqlite(tmp_path, **TRUSTED)
    logs = tmp_path / "logs"
    with running_server(tmp_path, logs=logs, settings=settings) as trusting:
        add(trusting.url, token, receiver.url)
    untrusted = settings | {"WENCHANG_WEBHOOK_TRUSTED_HOSTS": ""}
    with running_server(tmp_path, logs=logs, settings=untrusted) as server:
        write(server.url, token, "tea")
        states: list[dict[str, Any]] = []

        def refused(_: Receiver) -> bool:
            states[:] = [listed(server.url, token)[0]["delivery"]]
            return "refused" in states[0]["last_error"]

        receiver.wait_for(refused, "a refused attempt")
    assert states[0]["status"] == "retrying"
    assert receiver.all() == []


def test_a_server_on_gcs_delivers_from_its_change_feed(
    tmp_path: Path, receiver: Receiver, gcs_emulator: object
) -> None:
    token, settings = alice_on_sqlite(tmp_path, **TRUSTED)
    settings["WENCHANG_STORAGE"] = storage_url("gcs", tmp_path)
    with running_server(tmp_path, logs=tmp_path / "logs", settings=settings) as one:
        created = add(one.url, token, receiver.url)
        version = write(one.url, token, "tea")
        receiver.wait_for(lambda r: len(r.accepted()) == 1)
    delivery = receiver.accepted()[0]
    payload = Webhook(created["secret"]).verify(delivery.body, delivery.headers)
    assert payload["data"]["version"] == version
