"""History records age out as docs/history.md says, seen through HTTP.

A file's history is seeded with six records 200 days old (as a server running
then would have left them). Served with ``WENCHANG_HISTORY_MAX_DAYS=90`` (the
default), its history still lists them all until the file is written; each
write then drops at most four of the records past the age limit, oldest first,
never the newest. Served with ``0`` (no age limit), writes drop none.
"""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from tenchi.testing import open_http

from app.features.memory.domain import file_key
from app.features.memory.ports import Change, FileMetadata, HistoryRetention, Write
from app.infra.port_wiring import open_storage
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.storage_adapters import storage_url
from tests.support.transports import TokenRegistry

FILE = "/v1/files/user/notes/old"
OLD = datetime.now(UTC) - timedelta(days=200)
SEEDED = 6


async def seed(url: str) -> None:
    """Six versions written 200 days ago, kept by a server without an age limit."""
    keep_all = HistoryRetention(max_versions=100, max_days=0)
    async with open_storage(url, retention=keep_all) as storage:
        for n in range(SEEDED):
            metadata = FileMetadata("old", (), ("agent",), OLD + timedelta(hours=n))
            change = Change("write_file", "agent", OLD + timedelta(hours=n))
            key = file_key("user", "alice", "notes", "old")
            await storage.put(
                Write(key, f"- [stated] v{n}\n".encode(), metadata, change)
            )


async def ages(http: httpx.AsyncClient) -> list[bool]:
    """Whether each listed record is old, newest first."""
    listed = await http.get(f"{FILE}/versions")
    assert listed.status_code == 200, listed.text
    cutoff = (datetime.now(UTC) - timedelta(days=90)).isoformat()
    return [entry["at"] < cutoff for entry in listed.json()["entries"]]


async def append(http: httpx.AsyncClient, n: int) -> None:
    version = (await http.get(FILE)).json()["version"]
    line = {"line": f"- [stated] now {n}"}
    answer = await http.post(
        f"{FILE}/lines", json=line, headers={"If-Match": f'"{version}"'}
    )
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("backend", ["sqlite", "file"])
@pytest.mark.parametrize("max_days", [90, 0])
async def test_old_records_age_out_a_few_per_write(
    tmp_path: Path, backend: str, max_days: int
) -> None:
    url = storage_url(backend, tmp_path / "data")
    await seed(url)
    tokens = TokenRegistry()
    token = tokens.issue(Identity(grants={"user": Grant("alice", "owner")}))
    settings = Settings(
        storage=url,
        tokens_file=str(tmp_path / "tokens.json"),
        cursor_secret="history-age-cursor-secret",
        history_max_days=max_days,
    )
    app = build_app(settings, resolver=tokens)
    async with open_http(app) as http:
        http.headers["Authorization"] = f"Bearer {token}"
        assert await ages(http) == [True] * SEEDED  # nothing written: all kept
        await append(http, 1)
        if max_days == 0:
            assert await ages(http) == [False] + [True] * SEEDED
            return
        # Four of the six old records went, oldest first; the two newest stay.
        assert await ages(http) == [False, True, True]
        await append(http, 2)
        assert await ages(http) == [False, False]
