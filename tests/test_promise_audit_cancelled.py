"""A call cancelled mid-write (its client gone) leaves its write and its audit event
together, or neither.

Creates are sent through HTTP to an app on SQLite (the audit log in the same
database), each cancelled after a different number of event-loop turns: before
it reached storage, while its write waited in a batch or on the storage thread,
after it landed. Then the app closes, and a fresh one answers through HTTP:
every file that exists has exactly one ``ok`` ``write_file`` event naming the
version it holds, and a file that does not exist has none.
"""

import asyncio
from contextlib import suppress
from pathlib import Path
from typing import Any

from tests.support.audited_app import open_audited

CALLS = 48
BODY: dict[str, Any] = {
    "content": "- [stated] kept\n",
    "description": "",
    "aliases": [],
}


def path(n: int) -> str:
    return f"/v1/files/user/cancelled/c{n}"


async def test_a_cancelled_write_keeps_its_event_or_leaves_neither(
    tmp_path: Path,
) -> None:
    async with open_audited(tmp_path) as api:
        headers = api.alice.headers | {"If-None-Match": "*"}
        for n in range(CALLS):
            call = asyncio.create_task(
                api.http.put(path(n), json=BODY, headers=headers)
            )
            for _ in range(n):
                await asyncio.sleep(0)
            call.cancel()  # a call already answered is not cancelled
            with suppress(asyncio.CancelledError):
                await call

    landed: dict[int, str] = {}
    events: dict[str, list[tuple[str, str | None]]] = {}
    async with open_audited(tmp_path) as api:
        alice = api.alice.headers
        for n in range(CALLS):
            read = await api.http.get(path(n), headers=alice)
            assert read.status_code in (200, 404), read.text
            if read.status_code == 200:
                landed[n] = read.json()["version"]
        params = {"scope": "user", "area": "cancelled", "operation": "write_file"}
        while True:
            audit = await api.http.get("/v1/audit", params=params, headers=alice)
            assert audit.status_code == 200, audit.text
            for event in audit.json()["events"]:
                entry = (event["outcome"], event["version"])
                events.setdefault(event["name"], []).append(entry)
            if audit.json()["next_cursor"] is None:
                break
            params["cursor"] = audit.json()["next_cursor"]

    # A call cancelled before it ran wrote nothing; how many landed depends on
    # the machine's speed.
    assert 0 not in landed
    for n in range(CALLS):
        expected = [("ok", landed[n])] if n in landed else []
        assert [e for e in events.get(f"c{n}", []) if e[0] == "ok"] == expected, n
