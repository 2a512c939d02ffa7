"""Bearer authentication at the HTTP boundary: a token becomes an identity.

Every authenticated request also spends one unit of its credential's rate
limit, so one runaway client cannot starve the others.
"""

import functools
import hashlib
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Scope
from tenchi.errors import ERROR_SOURCE_HEADER, AppError, error_body
from tenchi.rate_limits import RATE_LIMITED, enforce_rate_limit
from tenchi.server import Hook, RequestInfo

from app.infra.memory.process_rate_limit_store import ProcessRateLimitStore
from app.infra.request_guards import retry_after
from app.server.context import AppContext
from app.shared.errors import resolver_failure_error
from app.shared.identity import Identity, Resolver


def refusal(error: AppError) -> JSONResponse:
    """The Tenchi error envelope for an error raised by an ASGI guard.

    It is an application error, marked as one the way Tenchi marks its own.
    """
    body = error_body(code=error.code, message=error.message, details=error.details)
    headers = {**error.headers, ERROR_SOURCE_HEADER: "app"}
    return JSONResponse(body, status_code=error.status, headers=headers)


TOKEN_PATHS = ("/v1/", "/mcp")
"""Where a request's token counts: the paths whose credentials must be unique."""


def duplicate_credentials_refusal(scope: Scope, names: list[bytes]) -> ASGIApp | None:
    """A 401 for a request to a token path carrying two ``Authorization`` headers.

    ``names``: the request's header names. Which one wins differs by layer
    (the MCP guard read the first, its tools the last), so an ambiguous
    request is refused rather than guessed at.
    """
    if names.count(b"authorization") < 2 or not scope["path"].startswith(TOKEN_PATHS):
        return None
    return refusal(
        resolver_failure_error("Send exactly one Authorization: Bearer <token> header.")
    )


def authenticate(resolver: Resolver, authorization: str) -> Identity:
    """The identity behind an ``Authorization`` header value, or ResolverFailure."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise resolver_failure_error("Send Authorization: Bearer <token>.")
    resolved = resolver.resolve(token.strip())
    if not isinstance(resolved, Identity):
        raise resolver_failure_error(resolved.detail)
    return resolved


RATE_LIMIT_NAMESPACE = "wenchang.requests"


@dataclass(frozen=True, slots=True)
class RateLimit:
    """Requests one credential may make per window; a limit of 0 is no limit."""

    limit: int = 0
    window_seconds: float = 60


@functools.lru_cache(maxsize=1024)
def caller_id(authorization: str) -> str:
    """A stable, opaque id of the credential in an ``Authorization`` value.

    Memoised: a client sends the same credential on every request, and only
    one that authenticated gets here.
    """
    token = authorization.partition(" ")[2].strip()
    return hashlib.sha256(f"wenchang-caller\0{token}".encode()).hexdigest()[:32]


def call_key_of(caller: str, retry_key: str) -> str:
    """The neutral name of one caller's call and all its retries (same key)."""
    return hashlib.sha256(f"wenchang-call\0{caller}\0{retry_key}".encode()).hexdigest()[
        :32
    ]


async def require_allowance(
    context: AppContext, caller: str, policy: RateLimit
) -> None:
    """Spend one request of ``caller``'s window, or raise RATE_LIMITED (429)."""
    if not policy.limit:
        return
    store = context.rate_limits
    if isinstance(store, ProcessRateLimitStore):
        # The default: counted in process, in one synchronous step.
        left = store.take(
            RATE_LIMIT_NAMESPACE, caller, policy.limit, policy.window_seconds, 1
        )
        if left is not None:
            wait = str(retry_after(left))
            raise AppError(RATE_LIMITED, headers={"Retry-After": wait})
    else:
        await enforce_rate_limit(
            context.rate_limits,
            namespace=RATE_LIMIT_NAMESPACE,
            scope=caller,
            limit=policy.limit,
            window_seconds=policy.window_seconds,
        )


def create_bearer_hook(
    resolver: Resolver, *, rate_limit: RateLimit = RateLimit()
) -> Hook:
    async def bearer(info: RequestInfo, context: AppContext) -> AppContext | None:
        if info.contract.public:
            return None
        authorization = info.headers.get("authorization", "")
        identity = authenticate(resolver, authorization)
        caller = caller_id(authorization)
        if rate_limit.limit:  # no coroutine to make when nothing is limited
            await require_allowance(context, caller, rate_limit)
        retry_key = info.headers.get("idempotency-key")
        return context.for_call(
            identity,
            caller=caller,
            request_id=info.request_id,
            call_key=call_key_of(caller, retry_key) if retry_key else "",
        )

    return bearer
