"""Exceptions of the typed client; every SPEC §4 error is one class.

Each class carries the fields of its payload as attributes, so a caller recovers
from the exception alone (``VersionConflictError.content`` / ``.version``).
``details`` keeps the whole payload. The hierarchy::

    WenchangError                       .code .category .message .details
    ├── RecoverableError                correct the call from the details, retry
    │   ├── VersionConflictError        .content .version
    │   ├── OversizeWriteError          .size .limit
    │   ├── FileQuotaExceededError      .limit
    │   ├── ReplaceFactMatchError       .content .version .match_count
    │   ├── InvalidArgumentError        .argument
    │   ├── NotFoundError               .reason
    │   └── PreconditionRequiredError
    ├── PermanentError                  do not retry
    │   ├── RestrictedScopeError        .reason .required_roles
    │   └── ResolverFailureError
    ├── TransientError                  retry (see ``transient_retry``)
    │   └── BackendUnavailableError     .reason
    └── InternalError                   an unexpected failure; nothing to correct

Every class also has ``scope``, ``area`` and ``name`` (None when the location
did not parse). Foreign exceptions become these in one place, ``translate_errors``.
"""

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar

import httpx
from pydantic import ValidationError
from tenchi.client import UnexpectedResponseError
from tenchi.errors import AppError
from tenchi.retries import RetryTimeoutError

__all__ = [
    "BackendUnavailableError",
    "FileQuotaExceededError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OversizeWriteError",
    "PermanentError",
    "PreconditionRequiredError",
    "RecoverableError",
    "ReplaceFactMatchError",
    "ResolverFailureError",
    "RestrictedScopeError",
    "TransientError",
    "VersionConflictError",
    "WenchangError",
    "error_from_payload",
    "translate_errors",
]


def _field[T](details: Mapping[str, Any], key: str, kind: type[T]) -> T:
    value = details.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"error payload field {key!r} is not a {kind.__name__}")
    return value


def _optional_text(details: Mapping[str, Any], key: str) -> str | None:
    value = details.get(key)
    return value if isinstance(value, str) else None


class WenchangError(Exception):
    """A failure reported by Wenchang; ``details`` is its SPEC §4 payload."""

    code: ClassVar[str] = "WENCHANG_ERROR"
    category: ClassVar[str] = "internal"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.scope = _optional_text(self.details, "scope")
        self.area = _optional_text(self.details, "area")
        self.name = _optional_text(self.details, "name")


class RecoverableError(WenchangError):
    category = "recoverable"


class PermanentError(WenchangError):
    category = "permanent"


class TransientError(WenchangError):
    category = "transient"


class InternalError(WenchangError):
    code = "INTERNAL_ERROR"


class VersionConflictError(RecoverableError):
    code = "VERSION_CONFLICT"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.content = _field(self.details, "content", str)
        self.version = _field(self.details, "version", str)


class OversizeWriteError(RecoverableError):
    code = "OVERSIZE_WRITE"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.size = _field(self.details, "size", int)
        self.limit = _field(self.details, "limit", int)


class FileQuotaExceededError(RecoverableError):
    code = "FILE_QUOTA_EXCEEDED"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.limit = _field(self.details, "limit", int)


class ReplaceFactMatchError(RecoverableError):
    code = "REPLACE_FACT_MATCH"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.content = _field(self.details, "content", str)
        self.version = _field(self.details, "version", str)
        self.match_count = _field(self.details, "match_count", int)


class InvalidArgumentError(RecoverableError):
    code = "INVALID_ARGUMENT"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.argument = _field(self.details, "argument", str)


class NotFoundError(RecoverableError):
    code = "MEMORY_NOT_FOUND"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.reason = _field(self.details, "reason", str)


class PreconditionRequiredError(RecoverableError):
    code = "PRECONDITION_REQUIRED"


class RestrictedScopeError(PermanentError):
    code = "RESTRICTED_SCOPE"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.reason = _field(self.details, "reason", str)
        roles: list[Any] = self.details.get("required_roles") or []
        self.required_roles = tuple(str(role) for role in roles)


class ResolverFailureError(PermanentError):
    code = "UNAUTHORIZED"


class BackendUnavailableError(TransientError):
    code = "BACKEND_UNAVAILABLE"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.reason = _field(self.details, "reason", str)


_BY_CODE: dict[str, type[WenchangError]] = {
    cls.code: cls
    for cls in (
        VersionConflictError,
        OversizeWriteError,
        FileQuotaExceededError,
        ReplaceFactMatchError,
        InvalidArgumentError,
        NotFoundError,
        PreconditionRequiredError,
        RestrictedScopeError,
        ResolverFailureError,
        BackendUnavailableError,
    )
}


def error_from_payload(
    code: str, message: str, details: Mapping[str, Any] | None
) -> WenchangError:
    """The exception for an error ``code`` and its payload (HTTP or MCP envelope)."""
    payload = dict(details or {})
    text = payload.get("message")
    cls = _BY_CODE.get(code, InternalError)
    try:
        return cls(text if isinstance(text, str) else message, payload)
    except TypeError:
        return InternalError(f"Wenchang sent a malformed {code} error: {message}")


def _unavailable(reason: str, message: str) -> BackendUnavailableError:
    return BackendUnavailableError(
        message,
        {"error": "BackendUnavailableError", "category": "transient", "reason": reason},
    )


@contextmanager
def translate_errors() -> Generator[None]:
    """Re-raise anything a call can fail with as a ``WenchangError``, ``from`` it."""
    try:
        yield
    except AppError as exc:
        raise error_from_payload(exc.code, exc.message, exc.details) from exc
    except RetryTimeoutError as exc:
        message = (
            f"Wenchang did not answer within the retry budget: {exc}. Retry later."
        )
        raise _unavailable("timeout", message) from exc
    except httpx.TimeoutException as exc:
        message = "Wenchang did not answer in time; retry the call."
        raise _unavailable("timeout", message) from exc
    except httpx.TransportError as exc:
        message = f"Wenchang is unreachable ({type(exc).__name__}); retry the call."
        raise _unavailable("unavailable", message) from exc
    except UnexpectedResponseError as exc:
        raise InternalError(f"Wenchang answered unexpectedly: {exc}") from exc
    except ValidationError as exc:
        raise _invalid_argument(exc) from exc


def _invalid_argument(exc: ValidationError) -> InvalidArgumentError:
    problem = exc.errors()[0]
    argument = str(problem["loc"][0]) if problem["loc"] else "request"
    message = (
        f"Argument {argument} is invalid: {problem['msg']}. Correct the argument "
        "and retry."
    )
    return InvalidArgumentError(
        message,
        {
            "error": "InvalidArgumentError",
            "category": "recoverable",
            "argument": argument,
        },
    )
