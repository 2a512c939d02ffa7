"""Rejects memory paths whose segments hide a slash as ``%2F`` or are not UTF-8.

The segments checked are the scope, area and name, and a version read's version
(``.../versions/a%2Fb`` is INVALID_ARGUMENT on ``version``, as on every surface).

Starlette decodes the path before routing, so ``/v1/files/user%2Fnotes/tea``
would otherwise be routed as scope ``user``, area ``notes``, name ``tea``. A
segment that contains an encoded slash names an invalid scope, area or name, and
the caller gets the same INVALID_ARGUMENT error as for any other bad segment.
Starlette also decodes invalid UTF-8 (``%FF``) as U+FFFD, which would alias
distinct byte strings to one file name: such a segment is refused the same way.
An unauthenticated request passes through untouched, so it still gets its 401
first, as the HTTP check order requires.
"""

from urllib.parse import unquote_to_bytes

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Scope
from tenchi.errors import AppError

from app.server.http.hooks import authenticate, refusal
from app.shared.errors import invalid_argument_error, invalid_version_error
from app.shared.identity import Resolver

FILES_PREFIX = b"/v1/files/"
ARGUMENTS = ("scope", "area", "name")
VERSION_READ = (*ARGUMENTS, "versions", "version")


SLASH_FAULT = "must not contain '/' (sent encoded as %2F)"


def _fault(segment: bytes) -> str | None:
    if b"%2f" in segment.lower():
        return SLASH_FAULT
    try:
        unquote_to_bytes(segment).decode()
    except UnicodeDecodeError:
        return "must be UTF-8 once percent-decoded"
    return None


def _segments(raw_path: bytes) -> list[bytes]:
    return raw_path[len(FILES_PREFIX) :].split(b"/")


def malformed_segment(raw_path: bytes) -> tuple[str, str] | None:
    """The argument whose raw segment hides ``%2F`` or is not UTF-8, and why."""
    if not raw_path.startswith(FILES_PREFIX):
        return None
    if b"%" not in raw_path and raw_path.isascii():
        return None
    segments = _segments(raw_path)
    # A version read names its version in the fifth segment, after "versions".
    versioned = len(segments) > 4 and segments[3] == b"versions"
    arguments = VERSION_READ if versioned else ARGUMENTS
    for argument, segment in zip(arguments, segments, strict=False):
        fault = None if argument == "versions" else _fault(segment)
        if fault is not None:
            return argument, fault
    return None


def authenticated(scope: Scope, resolver: Resolver) -> bool:
    try:
        authenticate(resolver, Headers(scope=scope).get("authorization", ""))
    except AppError:
        return False
    return True


def encoded_slash_refusal(scope: Scope, resolver: Resolver) -> ASGIApp | None:
    """The refusal of an authenticated HTTP request with a malformed segment."""
    malformed = malformed_segment(scope.get("raw_path") or b"")
    if malformed is None or not authenticated(scope, resolver):
        return None
    argument, fault = malformed
    if argument == "version" and fault == SLASH_FAULT:
        # The payload MCP, the client and a restore's body give a version with '/'.
        segment = _segments(scope["raw_path"])[VERSION_READ.index("version")]
        version = unquote_to_bytes(segment).decode(errors="surrogateescape")
        return refusal(invalid_version_error(version))
    return refusal(invalid_argument_error(argument, f"{argument} {fault}"))
