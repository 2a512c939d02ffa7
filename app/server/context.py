"""The per-call context every memory use case receives."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from tenchi.rate_limits import RateLimitStore

from app.features.audit.policy import AuditPolicy
from app.features.audit.ports import AuditLog, PendingEvent
from app.features.memory.domain import MemoryLimits
from app.features.memory.policy import ScopePolicy
from app.features.memory.ports import IndexCache, Storage
from app.features.memory.ports.markdown_tree import MarkdownTrees
from app.features.memory.ports.request_records import RequestRecords
from app.features.search.ports import SearchIndex
from app.features.webhooks.policy import WebhookPolicy
from app.features.webhooks.ports import WebhookStore
from app.server.auditing import audited, mark_audited
from app.shared.clock import utc_now
from app.shared.identity import Identity
from app.shared.progress import Progress

__all__ = ["AppContext", "Services", "mark_audited"]


@dataclass(frozen=True, slots=True)
class Services:
    """The ports and rules every call of a process shares, built once at start-up.

    The ports come from the composition root (``app/server/runtime.py``; tests
    build their own): the context chooses no adapter itself.
    """

    storage: Storage
    index_cache: IndexCache
    search_index: SearchIndex
    audit: AuditLog
    cursor_key: bytes
    idempotency: RequestRecords
    """The server's retry guard (``routes.binding``); no use case reads it."""
    rate_limits: RateLimitStore
    """The server's per-caller allowance (``hooks``); no use case reads it."""
    markdown_trees: MarkdownTrees
    """Opens a markdown tree on this machine (the markdown export and import)."""
    webhooks: WebhookStore
    """Registered webhook endpoints and their delivery state."""
    progress: Progress
    """Bars a long task advances (shown on a task's terminal, else nowhere)."""
    limits: MemoryLimits = field(default_factory=MemoryLimits)
    policy: ScopePolicy = field(default_factory=ScopePolicy)
    audit_policy: AuditPolicy = field(default_factory=AuditPolicy)
    webhook_policy: WebhookPolicy = field(default_factory=WebhookPolicy)
    clock: Callable[[], datetime] = utc_now


@dataclass(frozen=True, slots=True)
class AppContext:
    """The shared ports and rules a use case runs on, and who makes the call.

    Every request and write copies a context for itself, so what never changes
    after start-up sits in one ``Services`` the copies share: a copy sets the
    seven fields below, not twenty-one. Each shared port and rule reads as
    the context's own (``context.storage``).
    """

    services: Services
    identity: Identity | None = None
    surface: str = "http"
    caller: str = ""
    """Who sent an HTTP request, as an opaque id derived from its credential."""
    request_id: str = ""
    """The call's correlation id (HTTP ``x-request-id``, MCP request id)."""
    call_key: str = ""
    """Names this call across its repeats (HTTP: a digest of the caller and its
    retry key), so a repeat recognises a write it already made; "" without one."""
    audit_event: PendingEvent | None = None
    """A mutating call's own audit event (set by the audit wrapper): the use case
    puts it on its write's ``Change``, which commits it where storage can."""

    def audited[T](
        self,
        operation: str,
        request: object,
        run: Callable[["AppContext"], Awaitable[T]],
        *,
        mutates: bool,
    ) -> Awaitable[T]:
        """Run one call of ``operation`` and record it in the audit log.

        ``run`` gets the context the call runs with (carrying its audit event).

        The wrapper's own coroutine, handed back: no second frame per call.
        """
        return audited(self, operation, request, run, mutates=mutates)

    def for_call(
        self,
        identity: Identity,
        *,
        request_id: str,
        caller: str | None = None,
        surface: str | None = None,
        call_key: str = "",
    ) -> "AppContext":
        """This context for one authenticated call: who makes it, which request."""
        return AppContext(
            self.services,
            identity,
            self.surface if surface is None else surface,
            self.caller if caller is None else caller,
            request_id,
            call_key,
            self.audit_event,
        )

    def with_audit_event(self, event: PendingEvent | None) -> "AppContext":
        """This context for a call's own writes: they carry ``event`` (or none)."""
        return AppContext(
            self.services,
            self.identity,
            self.surface,
            self.caller,
            self.request_id,
            self.call_key,
            event,
        )

    @property
    def source(self) -> str:
        """Who a write is recorded as: the token's label, else the surface."""
        if self.identity is not None and self.identity.label:
            return self.identity.label
        return self.surface

    @property
    def storage(self) -> Storage:
        return self.services.storage

    @property
    def index_cache(self) -> IndexCache:
        return self.services.index_cache

    @property
    def search_index(self) -> SearchIndex:
        return self.services.search_index

    @property
    def audit(self) -> AuditLog:
        return self.services.audit

    @property
    def cursor_key(self) -> bytes:
        return self.services.cursor_key

    @property
    def idempotency(self) -> RequestRecords:
        return self.services.idempotency

    @property
    def rate_limits(self) -> RateLimitStore:
        return self.services.rate_limits

    @property
    def markdown_trees(self) -> MarkdownTrees:
        return self.services.markdown_trees

    @property
    def webhooks(self) -> WebhookStore:
        return self.services.webhooks

    @property
    def progress(self) -> Progress:
        return self.services.progress

    @property
    def limits(self) -> MemoryLimits:
        return self.services.limits

    @property
    def policy(self) -> ScopePolicy:
        return self.services.policy

    @property
    def audit_policy(self) -> AuditPolicy:
        return self.services.audit_policy

    @property
    def webhook_policy(self) -> WebhookPolicy:
        return self.services.webhook_policy

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.services.clock
