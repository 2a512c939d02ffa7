"""Every caller-visible Wenchang error: its definition, category and payload.

Each memory error is one ``ErrorDef`` (the HTTP status and envelope code), its
name and category in ``catalogue.KINDS``, and a builder named after it
(``memory_not_found`` -> ``memory_not_found_error``) that renders the error
payload into ``details`` through ``payload.memory_error``: ``error``,
``category``, ``message``, the location when it parses, and the error's extra
fields. HTTP, MCP and the typed client all read the same payload, so an agent
can recover from any of them without another call. Messages never carry an
entity id or a storage path. Definitions and builders live by concern:
``files``, ``access``, ``service``.
"""

from .access import (
    audit_role_required_error,
    expired_role_required_error,
    resolver_failure_error,
    restricted_scope,
    role_required_error,
    system_read_only_error,
    unauthorized,
)
from .catalogue import GUIDANCE, KINDS, Category, Kind
from .feed import cursor_expired, cursor_expired_error
from .files import (
    file_quota_exceeded,
    file_quota_exceeded_error,
    history_absent_error,
    invalid_argument,
    invalid_argument_error,
    invalid_version_error,
    memory_not_found,
    memory_not_found_error,
    oversize_write,
    oversize_write_error,
    precondition_required,
    precondition_required_error,
    replace_fact_match,
    replace_fact_match_error,
    version_absent_error,
    version_conflict,
    version_conflict_error,
)
from .payload import etag, memory_error
from .service import (
    MAX_LISTED_NAMES,
    RETRY_AFTER_SECONDS,
    audit_unavailable,
    audit_unavailable_error,
    backend_unavailable,
    backend_unavailable_error,
    import_conflict,
    import_conflict_error,
    outcome_unknown_error,
    purge_incomplete,
    purge_incomplete_error,
)
from .webhooks import webhook_not_found_error, webhook_role_required_error

__all__ = [
    "GUIDANCE",
    "KINDS",
    "MAX_LISTED_NAMES",
    "RETRY_AFTER_SECONDS",
    "Category",
    "Kind",
    "audit_role_required_error",
    "audit_unavailable",
    "audit_unavailable_error",
    "backend_unavailable",
    "backend_unavailable_error",
    "cursor_expired",
    "cursor_expired_error",
    "etag",
    "expired_role_required_error",
    "file_quota_exceeded",
    "file_quota_exceeded_error",
    "history_absent_error",
    "import_conflict",
    "import_conflict_error",
    "invalid_argument",
    "invalid_argument_error",
    "invalid_version_error",
    "memory_error",
    "memory_not_found",
    "memory_not_found_error",
    "outcome_unknown_error",
    "oversize_write",
    "oversize_write_error",
    "precondition_required",
    "precondition_required_error",
    "purge_incomplete",
    "purge_incomplete_error",
    "replace_fact_match",
    "replace_fact_match_error",
    "resolver_failure_error",
    "restricted_scope",
    "role_required_error",
    "system_read_only_error",
    "unauthorized",
    "version_absent_error",
    "version_conflict",
    "version_conflict_error",
    "webhook_not_found_error",
    "webhook_role_required_error",
]
