"""Refusals the memory feature does not raise: their name, category and advice.

Tenchi, the request guards and the MCP transport refuse some requests before any
operation runs (an unknown route, a spent rate limit, a reused idempotency key).
Each such code gets the same ``details`` as a memory error: ``error``,
``category``, ``message`` and the fields a caller needs to recover.
"""

from dataclasses import dataclass
from http import HTTPStatus

from app.shared.errors import GUIDANCE, Category


@dataclass(frozen=True, slots=True)
class Refusal:
    """How one refusal code reads in ``details``."""

    error: str
    category: Category
    advice: str


REFUSALS: dict[str, Refusal] = {
    "VALIDATION_ERROR": Refusal(
        "ValidationError",
        Category.RECOVERABLE,
        "The request does not match the API's schema; `errors` lists each field "
        "and what it expects.",
    ),
    "NOT_FOUND": Refusal(
        "RouteNotFoundError",
        Category.PERMANENT,
        "No route answers this path; /openapi.json lists every route.",
    ),
    "METHOD_NOT_ALLOWED": Refusal(
        "MethodNotAllowedError",
        Category.PERMANENT,
        "This route does not take this method; the Allow header lists those it takes.",
    ),
    "UNSUPPORTED_MEDIA_TYPE": Refusal(
        "UnsupportedMediaTypeError",
        Category.PERMANENT,
        "Send the body as the route expects, e.g. content-type: application/json.",
    ),
    "REQUEST_TOO_LARGE": Refusal(
        "RequestTooLargeError",
        Category.PERMANENT,
        "The request body is over the server's limit of `limit` bytes; send less.",
    ),
    "REQUEST_TIMEOUT": Refusal(
        "RequestTimeoutError",
        Category.TRANSIENT,
        "The request ran past the server's deadline.",
    ),
    "INTERNAL_SERVER_ERROR": Refusal(
        "InternalError", Category.INTERNAL, "The server failed unexpectedly."
    ),
    "RATE_LIMITED": Refusal(
        "RateLimitedError",
        Category.TRANSIENT,
        "This token has spent its requests for the current window; wait "
        "`retry_after` seconds.",
    ),
    "IDEMPOTENCY_CONFLICT": Refusal(
        "IdempotencyConflictError",
        Category.PERMANENT,
        "This Idempotency-Key was already used for a different request; use a new "
        "key for a new request.",
    ),
    "IDEMPOTENCY_IN_PROGRESS": Refusal(
        "IdempotencyInProgressError",
        Category.TRANSIENT,
        "The first request with this Idempotency-Key is still running; retry after "
        "`retry_after` seconds to get its answer.",
    ),
    "HOST_NOT_ALLOWED": Refusal(
        "HostNotAllowedError",
        Category.PERMANENT,
        "The Host header is not in WENCHANG_ALLOWED_HOSTS (DNS-rebinding "
        "protection); an operator adds the server's public host name there.",
    ),
    "ORIGIN_NOT_ALLOWED": Refusal(
        "OriginNotAllowedError",
        Category.PERMANENT,
        "The Origin header is not in WENCHANG_ALLOWED_ORIGINS (DNS-rebinding "
        "protection); an operator adds the page's origin there.",
    ),
    "UNHEALTHY": Refusal(
        "UnhealthyError",
        Category.TRANSIENT,
        "A dependency of the server does not answer; `checks` names it.",
    ),
}
"""Every refusal code outside ``app/shared/errors.py`` the server can send."""

PLAIN_TEXT_CODES = {421: "HOST_NOT_ALLOWED", 403: "ORIGIN_NOT_ALLOWED"}
"""The MCP transport's plain-text refusals, by status."""


def refusal_for(code: str, status: int) -> Refusal:
    """The entry for ``code``; an unlisted code is described by its status."""
    known = REFUSALS.get(code)
    if known is not None:
        return known
    category = Category.INTERNAL if status >= 500 else Category.PERMANENT
    phrase = HTTPStatus(status).phrase if status in HTTPStatus else "Refused"
    return Refusal(f"{phrase.replace(' ', '').replace('-', '')}Error", category, "")


def code_for_status(status: int) -> str:
    """A code for a body that carries none (plain text from the MCP transport)."""
    if status in PLAIN_TEXT_CODES:
        return PLAIN_TEXT_CODES[status]
    phrase = HTTPStatus(status).phrase if status in HTTPStatus else "ERROR"
    return phrase.upper().replace(" ", "_").replace("-", "_")


def sentence(message: str, refusal: Refusal) -> str:
    """The message a caller reads: what happened, what to do, the category's advice."""
    parts = [message.strip().rstrip(".") + "." if message.strip() else ""]
    parts += [refusal.advice, GUIDANCE[refusal.category]]
    return " ".join(part for part in parts if part)
