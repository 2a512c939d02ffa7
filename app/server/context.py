"""The per-call context every memory use case receives."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from tenchi.rate_limits import RateLimitStore

from app.features.audit.policy import AuditPolicy
from app.features.audit.ports import AuditLog
from app.features.memory.domain import MemoryLimits
from app.features.memory.policy import ScopePolicy
from app.features.memory.ports import IndexCache, Storage
from app.features.memory.ports.request_records import RequestRecords
from app.features.search.ports import SearchIndex
from app.infra.memory_idempotency_store import MemoryIdempotencyStore
from app.infra.process_rate_limit_store import ProcessRateLimitStore
from app.infra.stream_audit_log import NoAuditLog
from app.server.auditing import audited, mark_audited
from app.shared.clock import utc_now
from app.shared.identity import Identity

__all__ = ["AppContext", "mark_audited"]


@dataclass(frozen=True, slots=True)
class AppContext:
    storage: Storage
    index_cache: IndexCache
    cursor_key: bytes
    limits: MemoryLimits = field(default_factory=MemoryLimits)
    policy: ScopePolicy = field(default_factory=ScopePolicy)
    clock: Callable[[], datetime] = utc_now
    identity: Identity | None = None
    surface: str = "http"
    idempotency: RequestRecords = field(default_factory=MemoryIdempotencyStore)
    rate_limits: RateLimitStore = field(default_factory=ProcessRateLimitStore)
    caller: str = ""
    """Who sent an HTTP request, as an opaque id derived from its credential."""
    audit: AuditLog = field(default_factory=NoAuditLog)
    audit_policy: AuditPolicy = field(default_factory=AuditPolicy)
    request_id: str = ""
    """The call's correlation id (HTTP ``x-request-id``, MCP request id)."""
    search_index: SearchIndex | None = None
    """The backend's own search index; None searches corpora cached from storage."""
    call_key: str = ""
    """Names this call across its repeats (HTTP: a digest of the caller and its
    retry key), so a repeat recognises a write it already made; "" without one."""

    def audited[T](
        self,
        operation: str,
        request: object,
        run: Callable[[], Awaitable[T]],
        *,
        mutates: bool,
    ) -> Awaitable[T]:
        """Run one call of ``operation`` and record it in the audit log.

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
        """This context for one authenticated call: who makes it, which request.

        ``dataclasses.replace`` does the same at twice the cost (it collects
        the fields as keywords for ``__init__``, whose frozen assignments then
        run one by one), and every request and tool call makes one: each field
        is assigned here by name, a line each (a loop over the fields costs
        as much again). ``tests/test_context.py`` holds it equal to
        ``replace`` for every field.
        """
        copied = _new(AppContext)
        _set(copied, "storage", self.storage)
        _set(copied, "index_cache", self.index_cache)
        _set(copied, "cursor_key", self.cursor_key)
        _set(copied, "limits", self.limits)
        _set(copied, "policy", self.policy)
        _set(copied, "clock", self.clock)
        _set(copied, "identity", identity)
        _set(copied, "surface", self.surface if surface is None else surface)
        _set(copied, "idempotency", self.idempotency)
        _set(copied, "rate_limits", self.rate_limits)
        _set(copied, "caller", self.caller if caller is None else caller)
        _set(copied, "audit", self.audit)
        _set(copied, "audit_policy", self.audit_policy)
        _set(copied, "request_id", request_id)
        _set(copied, "search_index", self.search_index)
        _set(copied, "call_key", call_key)
        return copied

    @property
    def source(self) -> str:
        """Who a write is recorded as: the token's label, else the surface."""
        if self.identity is not None and self.identity.label:
            return self.identity.label
        return self.surface


_new = object.__new__
_set = object.__setattr__  # how a frozen dataclass's own __init__ assigns
