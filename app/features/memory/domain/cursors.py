"""Opaque listing cursors: a position relative to one listing, tagged by HMAC."""

import base64
import binascii
import hashlib
import hmac


def _body(position: str) -> str:
    return base64.urlsafe_b64encode(position.encode()).decode().rstrip("=")


def _tag(key: bytes, listing: str, position: str) -> str:
    digest = hmac.new(key, f"{listing}\0{position}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()[:12]).decode().rstrip("=")


def encode_cursor(key: bytes, listing: str, position: str) -> str:
    """An opaque cursor: a position relative to the listing, tagged by HMAC.

    ``listing`` names the caller's entity, scope and area, so a cursor used for
    any other listing fails its tag, and the entity id never enters the cursor.
    """
    return f"{_body(position)}.{_tag(key, listing, position)}"


def decode_cursor(key: bytes, listing: str, cursor: str) -> str | None:
    """The position encoded in ``cursor`` for ``listing``, or None if not issued.

    Only the spelling ``encode_cursor`` gives reads back: base64 decoding
    forgives padding, characters outside its alphabet and unused low bits, so
    without the re-encoding check one cursor would have many spellings.
    """
    body, dot, tag = cursor.partition(".")
    if not dot or not cursor.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        position = raw.decode()
    except (binascii.Error, ValueError):
        return None
    if body != _body(position):
        return None
    if not hmac.compare_digest(tag, _tag(key, listing, position)):
        return None
    return position
