"""Errors raised in-process (use cases, the MCP client) as the typed client's
exceptions, so every transport of the conformance suites raises the same ones."""

from collections.abc import Generator
from contextlib import contextmanager

from tenchi.errors import AppError
from wenchang_client import error_from_payload

__all__ = ["error_from_payload", "translate_errors"]


@contextmanager
def translate_errors() -> Generator[None]:
    """Re-raise an ``AppError`` as the client's exception of its code, ``from`` it."""
    try:
        yield
    except AppError as exc:
        retry_after = exc.headers.get("Retry-After")
        raise error_from_payload(
            exc.code, exc.message, exc.details, retry_after=retry_after
        ) from exc
