"""Path parameters the client refuses before sending: what a URL path cannot
carry as one segment (empty, ``.``/``..``, or holding ``/``), with the error the
server would give. Everything else is the server's to check, in its order."""

from wenchang_client.errors import InvalidArgumentError

SEGMENT_RULE = (
    "must be non-empty, not '.' or '..', and contain no '/', '\\' or control characters"
)
VERSION_RULE = (
    "is not a version: a version is one URL path segment (non-empty, not '.' or "
    "'..', no '/'), as every version the service issues is"
)
AREA_RULE = "must be a lowercase slug: a-z0-9 first, then a-z0-9, '-' or '_'"
RECOVERABLE_GUIDANCE = (
    "This is normal coordination, not an error the user needs to know about. "
    "Use the details above to correct the call and retry in the same turn, "
    "without asking the user."
)


def is_url_segment(segment: str) -> bool:
    """One segment a URL path can carry: non-empty, not a dot segment, no '/'."""
    return segment not in ("", ".", "..") and "/" not in segment


def is_version(version: str) -> bool:
    """A version an ETag can carry: one URL segment of printable text, no quote."""
    return is_url_segment(version) and version.isprintable() and '"' not in version


def invalid_argument(argument: str, detail: str) -> InvalidArgumentError:
    """The server's INVALID_ARGUMENT for ``argument``, raised locally."""
    sentence = f"Argument {argument} is invalid: {detail}"
    if not sentence.endswith((".", "!", "?")):
        sentence += "."
    message = f"{sentence} {RECOVERABLE_GUIDANCE}"
    details = {
        "error": "InvalidArgumentError",
        "category": "recoverable",
        "argument": argument,
        "message": message,
    }
    return InvalidArgumentError(message, details)


def _problem(argument: str, value: str) -> InvalidArgumentError:
    if argument == "version":
        return invalid_argument("version", f"{value!r} {VERSION_RULE}")
    if argument == "area":
        return invalid_argument("area", f"area {value!r} {AREA_RULE}")
    if argument == "name":
        return invalid_argument("name", f"name {value!r} {SEGMENT_RULE}")
    # No grant names a scope that is not one segment.
    return InvalidArgumentError(
        f"Argument {argument} is invalid: {value!r} is not a granted scope. "
        "Correct the argument and retry.",
        {
            "error": "InvalidArgumentError",
            "category": "recoverable",
            "argument": argument,
        },
    )


def require_url_segments(**segments: str | None) -> dict[str, str]:
    """The given path parameters (None ones left out), each a single segment.

    The area is checked before the name, as the server does.
    """
    present = {key: value for key, value in segments.items() if value is not None}
    order = ("scope", "area", "name", "version")
    for argument in sorted(present, key=lambda key: order.index(key)):
        if not is_url_segment(present[argument]):
            raise _problem(argument, present[argument])
    return present
