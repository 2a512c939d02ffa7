"""Exceptions of the typed client: every error code the server sends is one class.

Each class reads the fields of its payload into attributes (the annotated
ones, by the same name and type), so a caller recovers from the exception alone
(``VersionConflictError.content`` / ``.version``); ``details`` keeps the whole
payload, and ``retry_after_seconds`` the server's ``Retry-After`` when it sent
one. The hierarchy, by what a caller should do::

    WenchangError                       .code .category .message .details
    ├── RecoverableError                correct the call from the details, retry
    │   ├── VersionConflictError        .content .version
    │   ├── OversizeWriteError          .size .limit
    │   ├── FileQuotaExceededError      .limit
    │   ├── ReplaceFactMatchError       .content .version .match_count
    │   ├── InvalidArgumentError        .argument
    │   │   └── RequestValidationError  (VALIDATION_ERROR) .errors
    │   ├── NotFoundError               .reason
    │   ├── PreconditionRequiredError
    │   └── CursorExpiredError          (410)
    ├── PermanentError                  do not retry
    │   ├── RestrictedScopeError        .reason .required_roles
    │   ├── ResolverFailureError
    │   ├── RequestTooLargeError        .limit (None when not sent)
    │   ├── IdempotencyConflictError
    │   ├── ImportConflictError         .existing_count
    │   ├── AuditUnavailableError       .store
    │   ├── HostNotAllowedError         } the server's allow-lists refuse
    │   ├── OriginNotAllowedError       } this host or origin
    │   └── ApiMismatchError            the server does not speak this API
    │       ├── RouteNotFoundError
    │       ├── MethodNotAllowedError
    │       └── UnsupportedMediaTypeError
    ├── TransientError                  retry (see ``transient_retry``)
    │   ├── BackendUnavailableError     .reason
    │   ├── RateLimitedError
    │   ├── IdempotencyInProgressError
    │   ├── RequestTimeoutError
    │   ├── UnhealthyError
    │   └── PurgeIncompleteError        .remaining .passes
    └── InternalError                   an unexpected failure; nothing to correct

Every class also has ``scope``, ``area`` and ``name`` (None when the location
did not parse). Its ``category`` is the one the server sends in ``details``.
``wenchang_client.wire`` picks the class of a code (``error_from_payload``) and
turns foreign exceptions into these, in one place.
"""

from collections.abc import Mapping
from typing import Any, cast

from wenchang_client.error_base import WenchangError

__all__ = [
    "ApiMismatchError",
    "AuditUnavailableError",
    "BackendUnavailableError",
    "CursorExpiredError",
    "FileQuotaExceededError",
    "HostNotAllowedError",
    "IdempotencyConflictError",
    "IdempotencyInProgressError",
    "ImportConflictError",
    "InternalError",
    "InvalidArgumentError",
    "MethodNotAllowedError",
    "NotFoundError",
    "OriginNotAllowedError",
    "OversizeWriteError",
    "PermanentError",
    "PreconditionRequiredError",
    "PurgeIncompleteError",
    "RateLimitedError",
    "RecoverableError",
    "ReplaceFactMatchError",
    "RequestTimeoutError",
    "RequestTooLargeError",
    "RequestValidationError",
    "ResolverFailureError",
    "RestrictedScopeError",
    "RouteNotFoundError",
    "TransientError",
    "UnhealthyError",
    "UnsupportedMediaTypeError",
    "VersionConflictError",
    "WenchangError",
]


class RecoverableError(WenchangError, category="recoverable"): ...


class PermanentError(WenchangError, category="permanent"): ...


class TransientError(WenchangError, category="transient"): ...


class InternalError(WenchangError, code="INTERNAL_SERVER_ERROR"): ...


class VersionConflictError(RecoverableError, code="VERSION_CONFLICT"):
    content: str
    version: str


class OversizeWriteError(RecoverableError, code="OVERSIZE_WRITE"):
    size: int
    limit: int


class FileQuotaExceededError(RecoverableError, code="FILE_QUOTA_EXCEEDED"):
    limit: int


class ReplaceFactMatchError(RecoverableError, code="REPLACE_FACT_MATCH"):
    content: str
    version: str
    match_count: int


class InvalidArgumentError(RecoverableError, code="INVALID_ARGUMENT"):
    argument: str


class RequestValidationError(InvalidArgumentError, code="VALIDATION_ERROR"):
    """The framework refused the request's shape; ``errors`` lists each problem."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        problems: list[Any] = list((details or {}).get("errors") or [])
        self.errors: tuple[dict[str, Any], ...] = tuple(
            cast(dict[str, Any], problem)
            for problem in problems
            if isinstance(problem, dict)
        )
        first: dict[str, Any] = self.errors[0] if self.errors else {}
        location: list[Any] = list(first.get("loc") or ["request"])
        super().__init__(message, {"argument": str(location[-1]), **(details or {})})


class NotFoundError(RecoverableError, code="MEMORY_NOT_FOUND"):
    reason: str


class PreconditionRequiredError(RecoverableError, code="PRECONDITION_REQUIRED"): ...


class CursorExpiredError(RecoverableError, code="CURSOR_EXPIRED"):
    """The change feed no longer keeps the changes after the cursor."""


class RequestTooLargeError(PermanentError, code="REQUEST_TOO_LARGE"):
    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        limit = self.details.get("limit")
        self.limit = limit if isinstance(limit, int) else None


class RestrictedScopeError(PermanentError, code="RESTRICTED_SCOPE"):
    reason: str

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        roles: list[Any] = self.details.get("required_roles") or []
        self.required_roles = tuple(str(role) for role in roles)


class ResolverFailureError(PermanentError, code="UNAUTHORIZED"): ...


class IdempotencyConflictError(PermanentError, code="IDEMPOTENCY_CONFLICT"): ...


class ImportConflictError(PermanentError, code="IMPORT_CONFLICT"):
    existing_count: int


class AuditUnavailableError(PermanentError, code="AUDIT_UNAVAILABLE"):
    store: str


class HostNotAllowedError(PermanentError, code="HOST_NOT_ALLOWED"): ...


class OriginNotAllowedError(PermanentError, code="ORIGIN_NOT_ALLOWED"): ...


class ApiMismatchError(PermanentError):
    """The server does not serve a request this client sent as designed."""


class RouteNotFoundError(ApiMismatchError, code="NOT_FOUND"): ...


class MethodNotAllowedError(ApiMismatchError, code="METHOD_NOT_ALLOWED"): ...


class UnsupportedMediaTypeError(ApiMismatchError, code="UNSUPPORTED_MEDIA_TYPE"): ...


class BackendUnavailableError(TransientError, code="BACKEND_UNAVAILABLE"):
    reason: str


class RateLimitedError(TransientError, code="RATE_LIMITED"): ...


class IdempotencyInProgressError(TransientError, code="IDEMPOTENCY_IN_PROGRESS"): ...


class RequestTimeoutError(TransientError, code="REQUEST_TIMEOUT"): ...


class UnhealthyError(TransientError, code="UNHEALTHY"): ...


class PurgeIncompleteError(TransientError, code="PURGE_INCOMPLETE"):
    remaining: int
    passes: int
