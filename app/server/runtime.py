"""Process resources of a running Wenchang: storage, index cache and limits."""

import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, fields
from typing import TextIO

from tenchi.rate_limits import RateLimitStore

from app.features.audit.policy import AuditPolicy
from app.features.audit.ports import AuditLog
from app.features.memory.domain import MemoryLimits
from app.features.memory.policy import ScopePolicy
from app.features.memory.ports import HistoryRetention, IndexCache, Storage
from app.features.memory.ports.request_records import RequestRecords
from app.features.webhooks.ports import WebhookStore
from app.infra.markdown_tree import open_markdown_tree
from app.infra.port_wiring import (
    IDEMPOTENCY_STORES,
    RATE_LIMIT_STORES,
    open_audit_log,
    open_index_cache,
    open_request_store,
    open_storage,
    open_webhook_store,
    search_index_of,
)
from app.infra.tokens.token_file import ensure_cursor_secret
from app.server.context import AppContext, Services
from app.server.settings import Settings
from app.server.terminal_progress import progress_for
from app.server.webhook_worker import delivering


@dataclass(frozen=True, slots=True)
class Runtime:
    """What every request shares; the per-request context is built from it."""

    context: AppContext


def limits_from(settings: Settings) -> MemoryLimits:
    """Each limit is the setting of its name (``WENCHANG_<LIMIT>``)."""
    names = (limit.name for limit in fields(MemoryLimits))
    return MemoryLimits(**{name: getattr(settings, name) for name in names})


def history_retention(settings: Settings) -> HistoryRetention:
    return HistoryRetention(
        max_versions=settings.history_max_versions,
        max_days=settings.history_max_days,
        changes_seconds=int(settings.changes_retention),
    )


def cursor_key_from(settings: Settings) -> bytes:
    secret = settings.cursor_secret or ensure_cursor_secret(settings.tokens_path)
    return secret.encode()


@dataclass(frozen=True, slots=True)
class Ports:
    """The adapters a running process opened, each once."""

    storage: Storage
    index_cache: IndexCache
    audit: AuditLog
    idempotency: RequestRecords
    rate_limits: RateLimitStore
    webhooks: WebhookStore


def base_context(settings: Settings, ports: Ports, *, surface: str) -> AppContext:
    services = Services(
        storage=ports.storage,
        index_cache=ports.index_cache,
        search_index=search_index_of(ports.storage, ports.index_cache),
        audit=ports.audit,
        cursor_key=cursor_key_from(settings),
        idempotency=ports.idempotency,
        rate_limits=ports.rate_limits,
        markdown_trees=open_markdown_tree,
        webhooks=ports.webhooks,
        progress=progress_for(surface),
        limits=limits_from(settings),
        policy=ScopePolicy(write_roles=settings.write_policy),
        audit_policy=AuditPolicy(roles=frozenset(settings.audit_roles)),
        webhook_policy=settings.webhook_policy,
    )
    return AppContext(services, surface=surface)


def audit_stream(surface: str) -> TextIO:
    # A process serving MCP over stdio speaks the protocol on stdout.
    return sys.stderr if surface == "mcp" else sys.stdout


def create_lifespan(
    settings: Settings, *, surface: str = "http"
) -> Callable[[], AbstractAsyncContextManager[Runtime]]:
    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[Runtime]:
        async with (
            open_storage(
                settings.storage,
                sqlite_synchronous=settings.sqlite_synchronous,
                retention=history_retention(settings),
            ) as storage,
            open_index_cache(
                settings.index_cache,
                ttl=settings.index_cache_ttl,
                storage_url=settings.storage,
                storage=storage,
            ) as cache,
            open_request_store(
                settings.request_store_url,
                IDEMPOTENCY_STORES,
                sqlite_synchronous=settings.sqlite_synchronous,
            ) as idempotency,
            open_request_store(
                settings.rate_limit_store, RATE_LIMIT_STORES
            ) as rate_limits,
            open_audit_log(
                settings.audit_url,
                max_days=settings.audit_max_days,
                stream=lambda: audit_stream(surface),
                sqlite_synchronous=settings.sqlite_synchronous,
                storage=storage,
            ) as audit,
            open_webhook_store(settings.storage) as webhooks,
        ):
            ports = Ports(storage, cache, audit, idempotency, rate_limits, webhooks)
            context = base_context(settings, ports, surface=surface)
            if surface != "http":  # tasks and MCP over stdio deliver nothing
                yield Runtime(context)
                return
            async with delivering(context, settings.webhook_policy):
                yield Runtime(context)

    return lifespan


def create_context(runtime: Runtime) -> AppContext:
    return runtime.context
