"""Error codes and foreign exceptions of a client call become ``WenchangError``s.

``error_from_payload`` names an error by its code: the class in
``app.client.errors`` that declares that ``code``.

Tenchi's client raises an ``AppError`` only for an envelope the app itself
sent; the framework's own refusals (``VALIDATION_ERROR``, ``REQUEST_TOO_LARGE``,
``NOT_FOUND``, …) reach it as a bare ``UnexpectedResponseError``. So the httpx
client of ``open_memory_client`` carries ``keep_refusal`` as a response hook:
during a call it keeps the envelope of every refusal not sent by the app, and
``translate_errors`` reads the last one to name the error by its code.
"""

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

import httpx
from pydantic import ValidationError
from tenchi.client import UnexpectedResponseError
from tenchi.errors import ERROR_SOURCE_HEADER, AppError
from tenchi.retries import RetryTimeoutError

from app.client import errors
from app.client.errors import (
    BackendUnavailableError,
    InternalError,
    InvalidArgumentError,
    WenchangError,
)

__all__ = ["error_from_payload", "keep_refusal", "translate_errors"]


def _classes_by_code() -> dict[str, type[WenchangError]]:
    """Every exported class that names a code of its own (not the categories)."""
    exported: list[object] = [getattr(errors, name) for name in errors.__all__]
    return {
        cls.code: cls
        for cls in exported
        if isinstance(cls, type)
        and issubclass(cls, WenchangError)
        and "code" in vars(cls)
    }


_BY_CODE = _classes_by_code()


def _as_payload(details: object) -> dict[str, object]:
    if isinstance(details, dict):
        return dict(cast(dict[str, object], details))
    if isinstance(details, list):
        return {"errors": cast(list[object], details)}
    return {}


def error_from_payload(
    code: str,
    message: str,
    details: object,
    *,
    retry_after: str | None = None,
) -> WenchangError:
    """The exception for an error ``code``, its payload and its ``Retry-After``."""
    payload = _as_payload(details)
    text = payload.get("message")
    cls = _BY_CODE.get(code, InternalError)
    try:
        error = cls(text if isinstance(text, str) else message, payload)
    except TypeError:
        return InternalError(f"Wenchang sent a malformed {code} error: {message}")
    if retry_after is not None and retry_after.isdigit():
        error.retry_after_seconds = float(retry_after)
    return error


@dataclass(frozen=True, slots=True)
class _Refusal:
    code: str
    message: str
    details: Any
    retry_after: str | None


_refusals: ContextVar[list[_Refusal] | None] = ContextVar(
    "wenchang_client_refusals", default=None
)


async def keep_refusal(response: httpx.Response) -> None:
    """httpx response hook: keep an error envelope the app did not send."""
    kept = _refusals.get()
    if kept is None or response.status_code < 400:
        return
    if response.headers.get(ERROR_SOURCE_HEADER) == "app":
        return
    await response.aread()
    try:
        body: Any = response.json()
    except ValueError:
        return
    envelope = cast(dict[str, object], body) if isinstance(body, dict) else {}
    code, message = envelope.get("code"), envelope.get("message")
    if isinstance(code, str) and isinstance(message, str):
        retry_after = response.headers.get("retry-after")
        kept.append(_Refusal(code, message, envelope.get("details"), retry_after))


def _unavailable(reason: str, message: str) -> BackendUnavailableError:
    return BackendUnavailableError(
        message,
        {"error": "BackendUnavailableError", "category": "transient", "reason": reason},
    )


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


def _from_app_error(exc: AppError) -> WenchangError:
    retry_after = exc.headers.get("Retry-After")
    return error_from_payload(
        exc.code, exc.message, exc.details, retry_after=retry_after
    )


def _from_unexpected(
    exc: UnexpectedResponseError, kept: list[_Refusal]
) -> WenchangError:
    if not kept:
        return InternalError(f"Wenchang answered unexpectedly: {exc}")
    refusal = kept[-1]
    return error_from_payload(
        refusal.code, refusal.message, refusal.details, retry_after=refusal.retry_after
    )


@contextmanager
def translate_errors() -> Generator[None]:
    """Re-raise anything a call can fail with as a ``WenchangError``, ``from`` it."""
    kept: list[_Refusal] = []
    token = _refusals.set(kept)
    try:
        yield
    except AppError as exc:
        raise _from_app_error(exc) from exc
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
        raise _from_unexpected(exc, kept) from exc
    except ValidationError as exc:
        raise _invalid_argument(exc) from exc
    finally:
        _refusals.reset(token)
