"""What a process's lifespan opens (``app/server/runtime.py``): each port from
its own setting, with the durability, retention, TTL and audit stream the
settings give, and a webhook worker only where HTTP is served."""

import asyncio
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.features.memory.ports import HistoryRetention
from app.features.webhooks.policy import WebhookPolicy
from app.infra.change_markers import StorageChangeMarkers
from app.infra.memory.index_cache import MemoryIndexCache
from app.infra.memory.storage import MemoryStorage
from app.infra.sqlite.audit_log import SqliteAuditLog
from app.infra.sqlite.guard_store import SqliteGuardStore
from app.infra.sqlite.storage import SqliteStorage
from app.infra.stream_audit_log import StreamAuditLog
from app.server import runtime, tasks
from app.server.context import AppContext
from app.server.runtime import create_lifespan
from app.server.settings import Settings
from tests.http_support import FILE, create, open_api
from tests.support.webhook_receiver import Receiver, running_receiver

NORMAL = 1
BOUND_SECONDS = 30.0


def settings_in(tmp_path: Path, **options: Any) -> Settings:
    return Settings(tokens_file=str(tmp_path / "tokens.json"), **options)


async def synchronous(port: object) -> int:
    assert isinstance(port, SqliteStorage | SqliteGuardStore | SqliteAuditLog)
    db = port._db  # pyright: ignore[reportPrivateUsage]
    rows = await db.execute_fetchall("PRAGMA synchronous")
    return int(next(iter(rows))[0])


async def test_each_sqlite_port_opens_at_its_own_url_as_durable_as_told(
    tmp_path: Path,
) -> None:
    settings = settings_in(
        tmp_path,
        storage=f"sqlite:///{tmp_path / 's' / 'w.db'}",
        request_store=f"sqlite:///{tmp_path / 'i' / 'i.db'}",
        rate_limit_store=f"sqlite:///{tmp_path / 'r' / 'r.db'}",
        audit=f"sqlite:///{tmp_path / 'a' / 'a.db'}",
        audit_max_days=3,
        sqlite_synchronous="normal",
    )
    async with create_lifespan(settings, surface="task")() as running:
        ports = running.context
        levels = [
            await synchronous(port)
            for port in (ports.storage, ports.idempotency, ports.audit)
        ]
        assert isinstance(ports.audit, SqliteAuditLog)
        kept = ports.audit._max_age  # pyright: ignore[reportPrivateUsage]

    assert levels == [NORMAL] * 3
    assert kept == timedelta(days=3)
    for name in ("s/w.db", "i/i.db", "r/r.db", "a/a.db"):
        assert (tmp_path / name).is_file(), name


async def test_the_audit_log_of_the_storage_s_file_takes_each_write_s_event(
    tmp_path: Path,
) -> None:
    settings = settings_in(tmp_path, storage=f"sqlite:///{tmp_path / 'w.db'}")
    async with create_lifespan(settings, surface="task")() as running:
        storage = running.context.storage
        assert isinstance(storage, SqliteStorage)
        staged = storage._staged  # pyright: ignore[reportPrivateUsage]

    assert staged is not None


async def test_memory_storage_keeps_the_history_and_index_ttl_of_the_settings(
    tmp_path: Path,
) -> None:
    settings = settings_in(
        tmp_path,
        storage="memory://",
        index_cache_ttl=7,
        history_max_versions=2,
        history_max_days=5,
        changes_retention=3600,
    )
    async with create_lifespan(settings, surface="task")() as running:
        storage, cache = running.context.storage, running.context.index_cache
        assert isinstance(storage, MemoryStorage)
        assert isinstance(cache, MemoryIndexCache)
        kept = storage._retention  # pyright: ignore[reportPrivateUsage]
        ttl = cache._ttl  # pyright: ignore[reportPrivateUsage]

    assert kept == HistoryRetention(max_versions=2, max_days=5, changes_seconds=3600)
    assert ttl == 7


async def test_file_storage_s_index_cache_follows_the_storage_s_markers(
    tmp_path: Path,
) -> None:
    settings = settings_in(tmp_path, storage=f"file://{tmp_path / 'tree'}")
    async with create_lifespan(settings, surface="task")() as running:
        cache = running.context.index_cache
        assert isinstance(cache, MemoryIndexCache)
        markers = cache._markers  # pyright: ignore[reportPrivateUsage]

    assert isinstance(markers, StorageChangeMarkers)


@pytest.mark.parametrize(("surface", "stream"), [("mcp", "stderr"), ("task", "stdout")])
async def test_audit_events_on_a_stream_go_where_the_surface_leaves_room(
    tmp_path: Path, surface: str, stream: str
) -> None:
    """MCP over stdio speaks the protocol on stdout: its events go to stderr."""
    settings = settings_in(tmp_path, storage="memory://", audit="stdout")
    async with create_lifespan(settings, surface=surface)() as running:
        context = running.context
        assert isinstance(context.audit, StreamAuditLog)
        written_to = context.audit._stream()  # pyright: ignore[reportPrivateUsage]
        expected = getattr(sys, stream)  # the stream as this test sees it

    assert written_to is expected
    assert context.surface == surface


async def test_tenchi_task_run_opens_the_environment_s_settings_as_a_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner ``tenchi task run`` finds (``app.server.tasks.runner``)."""
    monkeypatch.chdir(tmp_path)  # no wenchang.toml here
    monkeypatch.setenv("WENCHANG_STORAGE", f"sqlite:///{tmp_path / 'w.db'}")
    monkeypatch.setenv("WENCHANG_TOKENS_FILE", str(tmp_path / "tokens.json"))
    async with tasks._configured_lifespan() as running:  # pyright: ignore[reportPrivateUsage]
        context = running.context

    assert context.surface == "task"
    assert (tmp_path / "w.db").is_file()


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[AppContext, WebhookPolicy]]:
    """What each webhook worker the lifespan starts is given."""
    started: list[tuple[AppContext, WebhookPolicy]] = []

    @asynccontextmanager
    async def recorded(
        context: AppContext, policy: WebhookPolicy
    ) -> AsyncGenerator[None]:
        started.append((context, policy))
        yield

    monkeypatch.setattr(runtime, "delivering", recorded)
    return started


@pytest.mark.parametrize("surface", ["http", "task", "mcp"])
async def test_only_an_http_server_runs_the_webhook_worker(
    tmp_path: Path,
    surface: str,
    workers: list[tuple[AppContext, WebhookPolicy]],
) -> None:
    settings = settings_in(
        tmp_path, storage="memory://", webhook_trusted_hosts=("127.0.0.1",)
    )
    async with create_lifespan(settings, surface=surface)() as running:
        context = running.context

    if surface == "http":
        assert workers == [(context, settings.webhook_policy)]
    else:
        assert workers == []


@pytest.fixture
def receiver() -> Any:
    with running_receiver() as running:
        yield running


async def test_a_served_change_is_delivered_by_the_server_s_own_worker(
    tmp_path: Path, receiver: Receiver
) -> None:
    async with open_api(
        tmp_path, storage="memory://", webhook_trusted_hosts="127.0.0.1"
    ) as api:
        added = await api.http.post(
            "/v1/webhooks/user", json={"url": receiver.url}, headers=api.alice
        )
        assert added.status_code == 201, added.text
        await create(api, FILE)
        async with asyncio.timeout(BOUND_SECONDS):
            while not receiver.accepted():
                await asyncio.sleep(0.05)

    [delivery] = receiver.accepted()
    assert delivery.data["name"] == "tea"
