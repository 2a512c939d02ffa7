"""Where a memory file is: the location type and the one rule for a key segment.

A scope, entity id, area or name becomes one segment of a storage key, a URL
path and a filesystem path alike, so every layer checks it with
``is_valid_segment`` and reports ``SEGMENT_RULE``; the typed client refuses
before sending only what a URL cannot carry (``is_url_segment``).
"""

from dataclasses import dataclass

SEGMENT_RULE = (
    "must be non-empty, not '.' or '..', and contain no '/', '\\' or control characters"
)
VERSION_RULE = (
    "is not a version: a version is one URL path segment (non-empty, not '.' or "
    "'..', no '/'), as every version the service issues is"
)


def is_url_segment(segment: str) -> bool:
    """One segment a URL path can carry: non-empty, not a dot segment, no '/'.

    The rest of the rule is the server's to check, in its own order.
    """
    return segment not in ("", ".", "..") and "/" not in segment


def is_valid_segment(segment: str) -> bool:
    """A storage-key segment: a URL segment without '\\' or control characters."""
    if segment.isascii():
        # Printable ASCII is exactly ASCII without C0 controls and DEL: the
        # rule in one C call instead of a Python step per character.
        return is_url_segment(segment) and segment.isprintable() and "\\" not in segment
    return is_url_segment(segment) and not any(
        char == "\\" or ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F
        for char in segment
    )


@dataclass(frozen=True, slots=True)
class Location:
    """Where a memory file lives, as the caller named it (never the entity id)."""

    scope: str
    area: str
    name: str

    def describe(self) -> str:
        return f"scope {self.scope}, area {self.area}, name {self.name}"
