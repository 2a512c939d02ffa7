"""Bearer authentication at the HTTP boundary: a token becomes an identity."""

from dataclasses import replace

from tenchi.server import Hook, RequestInfo

from app.server.context import AppContext
from app.shared.errors import resolver_failure_error
from app.shared.identity import Identity, Resolver


def authenticate(resolver: Resolver, authorization: str) -> Identity:
    """The identity behind an ``Authorization`` header value, or ResolverFailure."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise resolver_failure_error("Send Authorization: Bearer <token>.")
    resolved = resolver.resolve(token.strip())
    if not isinstance(resolved, Identity):
        raise resolver_failure_error(resolved.detail)
    return resolved


def create_bearer_hook(resolver: Resolver) -> Hook:
    async def bearer(info: RequestInfo, context: AppContext) -> AppContext | None:
        if info.contract.public:
            return None
        identity = authenticate(resolver, info.headers.get("authorization", ""))
        return replace(context, identity=identity)

    return bearer
