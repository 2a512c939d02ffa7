"""On SQLite a mutation's audit event commits in the mutation's own transaction.

The change and its event are one statement: an event that cannot be stored
keeps the change from landing; every landed change (each version record) has
exactly one event naming the version it wrote; a call that succeeds without
writing (an idempotent replay) still gets its one event; an audit log in another
database gets each event once, by the log's own durable write.
"""

import json
from pathlib import Path
from typing import Any

from tests.support.audited_app import Audited, open_audited
from tests.support.sqlite_file import sql

FILE = "/v1/files/user/notes/tea"
BODY: dict[str, Any] = {
    "content": "- [stated] green\n",
    "description": "d",
    "aliases": [],
}


def if_match(version: str) -> dict[str, str]:
    return {"If-Match": f'"{version}"'}


def mutation_events(database: Path) -> list[tuple[str, str, str | None]]:
    """(operation, outcome, version) of every stored event of a file mutation."""
    rows = sql(database, "SELECT record FROM audit_events ORDER BY at, id")
    events = [json.loads(row[0]) for row in rows]
    return [
        (e["operation"], e["outcome"], e["version"])
        for e in events
        if e["operation"] not in ("read_file", "list_prefix", "get_memory_index")
    ]


def history(database: Path) -> list[tuple[str, str]]:
    """(operation, version) of every version record of the file, oldest first."""
    rows = sql(
        database,
        "SELECT operation, version FROM memory_history WHERE key LIKE ? ORDER BY seq",
        "user/alice/notes/tea%",
    )
    return [(row[0], row[1]) for row in rows]


async def mutate(api: Audited, method: str, path: str, **kwargs: Any) -> str:
    answer = await api.http.request(method, path, **kwargs)
    assert answer.status_code in (200, 201, 204), answer.text
    return answer.json()["version"] if answer.content else ""


async def test_a_change_whose_event_cannot_be_stored_does_not_land(
    tmp_path: Path,
) -> None:
    """Staging the event fails, so the write statement fails: 503, file unchanged."""
    database = tmp_path / "wenchang.db"
    async with open_audited(tmp_path) as api:
        alice = api.alice.headers
        before = (await api.http.get(FILE, headers=alice)).json()
        sql(
            database,
            "CREATE TRIGGER refuse_events BEFORE INSERT ON audit_staged "
            "BEGIN SELECT RAISE(ABORT, 'audit store refused'); END",
        )
        refused = await api.http.put(
            FILE, json=BODY, headers=alice | if_match(before["version"])
        )
        after = (await api.http.get(FILE, headers=alice)).json()
        sql(database, "DROP TRIGGER refuse_events")
        retried = await api.http.put(
            FILE, json=BODY, headers=alice | if_match(before["version"])
        )

    assert refused.status_code == 503
    assert refused.json()["code"] == "BACKEND_UNAVAILABLE"
    assert (after["version"], after["content"]) == (
        before["version"],
        before["content"],
    )
    assert retried.status_code == 200
    assert history(database) == [("write_file", retried.json()["version"])]


async def test_every_landed_change_has_exactly_one_event_with_its_version(
    tmp_path: Path,
) -> None:
    """write, append, replace, delete, restore: one event each, the version landed."""
    database = tmp_path / "wenchang.db"
    async with open_audited(tmp_path) as api:
        alice = api.alice.headers
        first = (await api.http.get(FILE, headers=alice)).json()["version"]
        keyed = alice | if_match(first) | {"Idempotency-Key": "k1"}
        written = await mutate(api, "PUT", FILE, json=BODY, headers=keyed)
        # A replay succeeds without writing, and is still one event.
        assert await mutate(api, "PUT", FILE, json=BODY, headers=keyed) == written
        line = {"line": "- [stated] black"}
        appended = await mutate(
            api, "POST", f"{FILE}/lines", json=line, headers=alice | if_match(written)
        )
        swap = {"old_string": "black", "new_string": "oolong"}
        replaced = await mutate(
            api,
            "POST",
            f"{FILE}/replace",
            json=swap,
            headers=alice | if_match(appended),
        )
        await mutate(api, "DELETE", FILE, headers=alice | if_match(replaced))
        restored = await mutate(
            api,
            "POST",
            f"{FILE}/restore",
            json={"version": replaced},
            headers=alice | {"If-None-Match": "*"},
        )

    assert mutation_events(database) == [
        ("write_file", "ok", written),
        ("write_file", "ok", written),
        ("append_line", "ok", appended),
        ("replace_fact", "ok", replaced),
        ("delete_file", "ok", replaced),
        ("restore_version", "ok", restored),
    ]
    landed = [(op, v) for op, v in history(database) if op != "delete_file"]
    assert landed == [
        ("write_file", written),
        ("append_line", appended),
        ("replace_fact", replaced),
        ("restore_version", restored),
    ]


async def test_a_log_in_another_database_gets_each_event_once(tmp_path: Path) -> None:
    """No event lands in the storage database; the log's file has the write's event."""
    elsewhere = tmp_path / "audit.db"
    async with open_audited(tmp_path, audit=f"sqlite:///{elsewhere}") as api:
        alice = api.alice.headers
        first = (await api.http.get(FILE, headers=alice)).json()["version"]
        written = await mutate(
            api, "PUT", FILE, json=BODY, headers=alice | if_match(first)
        )

    assert mutation_events(elsewhere) == [("write_file", "ok", written)]
    tables = sql(tmp_path / "wenchang.db", "SELECT name FROM sqlite_master")
    assert ("audit_events",) not in tables
