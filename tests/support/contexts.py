"""An ``AppContext`` over given storage and cache, its other ports in process."""

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from app.features.memory.domain import MemoryLimits
from app.features.memory.policy import ScopePolicy
from app.features.memory.ports import IndexCache, Storage
from app.features.search.ports import SearchIndex
from app.infra.markdown_tree import open_markdown_tree
from app.infra.memory.idempotency_store import MemoryIdempotencyStore
from app.infra.memory.process_rate_limit_store import ProcessRateLimitStore
from app.infra.memory.webhook_store import MemoryWebhookStore
from app.infra.port_wiring import search_index_of
from app.infra.stream_audit_log import NoAuditLog
from app.server.context import AppContext, Services
from app.shared.clock import utc_now
from app.shared.identity import Identity
from app.shared.progress import NoProgress


def context_over(
    storage: Storage,
    index_cache: IndexCache,
    *,
    search_index: SearchIndex | None = None,
    cursor_key: bytes = b"test-cursor-key",
    limits: MemoryLimits | None = None,
    policy: ScopePolicy | None = None,
    clock: Callable[[], datetime] = utc_now,
    identity: Identity | None = None,
    surface: str = "http",
) -> AppContext:
    """What the runtime builds for ``storage`` (its search index unless one is
    given), with no audit log and in-process request guards."""
    services = Services(
        storage=storage,
        index_cache=index_cache,
        search_index=search_index or search_index_of(storage, index_cache),
        audit=NoAuditLog(),
        cursor_key=cursor_key,
        idempotency=MemoryIdempotencyStore(),
        rate_limits=ProcessRateLimitStore(),
        markdown_trees=open_markdown_tree,
        webhooks=MemoryWebhookStore(),
        progress=NoProgress(),
        limits=limits or MemoryLimits(),
        policy=policy or ScopePolicy(),
        clock=clock,
    )
    return AppContext(services, identity=identity, surface=surface)


def with_services(context: AppContext, **changes: object) -> AppContext:
    """``context`` with some of its shared ports or rules replaced (a spy, a
    smaller limit): ``dataclasses.replace`` of its ``services``."""
    return replace(context, services=replace(context.services, **changes))
