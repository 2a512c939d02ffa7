"""The entity tag of a caller's whole index, and the tags a caller says it holds."""

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

from .timestamps import format_timestamp

ANY_TAG = "*"
"""Held by a caller that accepts any current index (``If-None-Match: *``)."""

INDEX_FORMAT = "index-1"
"""Changes whenever the index body's shape or ordering rules change."""


def index_tag(
    entities: Sequence[tuple[str, str]],
    *,
    priority: Sequence[str],
    max_bytes: int,
    next_expiry: datetime | None = None,
    with_expired: bool = False,
) -> str:
    """A strong ETag over every input the index body is a function of.

    ``entities`` pairs each granted prefix with its change marker; a write,
    import or purge of any of them replaces the marker, so the tag moves with
    the body without the body being built. ``next_expiry`` is the earliest
    moment a file of the index expires (None: none will): under the same
    markers the body changes only then, and so does this moment.
    ``with_expired`` (an owner's view, expired files shown) is a part of its
    own, so that view and the default one never share a tag.
    """
    parts: list[object] = [INDEX_FORMAT, list(priority), max_bytes]
    parts.append([list(pair) for pair in entities])
    if next_expiry is not None:  # a tag without expiring files reads as it did
        parts.append(format_timestamp(next_expiry))
    if with_expired:
        parts.append("with-expired")
    material = json.dumps(parts, separators=(",", ":"))
    return f'"ix-{hashlib.sha256(material.encode()).hexdigest()[:40]}"'


def held_tags(if_none_match: str | None) -> frozenset[str]:
    """The tags an If-None-Match list names, weak forms as strong ones."""
    if if_none_match is None:
        return frozenset()
    parts = (part.strip() for part in if_none_match.split(","))
    return frozenset(part.removeprefix("W/") for part in parts if part)
