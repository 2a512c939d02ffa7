"""Rejects memory paths whose segments hide a slash as ``%2F``.

Starlette decodes the path before routing, so ``/v1/files/user%2Fnotes/tea``
would otherwise be routed as scope ``user``, area ``notes``, name ``tea``. A
segment that contains an encoded slash names an invalid scope, area or name, and
the caller gets the same INVALID_ARGUMENT error as for any other bad segment.
An unauthenticated request passes through untouched, so it still gets its 401
first, as the HTTP check order requires.
"""

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Scope
from tenchi.errors import AppError

from app.server.hooks import authenticate, refusal
from app.shared.errors import invalid_argument_error
from app.shared.identity import Resolver

FILES_PREFIX = b"/v1/files/"
ARGUMENTS = ("scope", "area", "name")


def encoded_slash_argument(raw_path: bytes) -> str | None:
    """The argument whose raw segment carries ``%2F``, if any."""
    if b"%" not in raw_path or not raw_path.startswith(FILES_PREFIX):
        return None
    segments = raw_path[len(FILES_PREFIX) :].split(b"/")
    for argument, segment in zip(ARGUMENTS, segments, strict=False):
        if b"%2f" in segment.lower():
            return argument
    return None


def _authenticated(scope: Scope, resolver: Resolver) -> bool:
    try:
        authenticate(resolver, Headers(scope=scope).get("authorization", ""))
    except AppError:
        return False
    return True


def encoded_slash_refusal(scope: Scope, resolver: Resolver) -> ASGIApp | None:
    """The refusal of an authenticated HTTP request whose path hides a ``%2F``."""
    argument = encoded_slash_argument(scope.get("raw_path") or b"")
    if argument is None or not _authenticated(scope, resolver):
        return None
    error = invalid_argument_error(
        argument, f"{argument} must not contain '/' (sent encoded as %2F)"
    )
    return refusal(error)
