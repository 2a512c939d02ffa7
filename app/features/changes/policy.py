"""Whose changes a caller reads, and the cursors that name a place in them."""

from app.features.memory.domain import decode_cursor, encode_cursor
from app.features.memory.domain.keys import entity_prefix
from app.features.memory.ports import ChangeFeed, Storage
from app.shared.errors import backend_unavailable_error, invalid_argument_error
from app.shared.identity import Identity

from ..memory.policy import require_grant

_START = "0"


def change_listing(scope: str, entity_id: str) -> str:
    """What a cursor is bound to: this entity's feed in this scope."""
    return f"changes\0{scope}\0{entity_id}"


def feed_prefix(identity: Identity, scope: str) -> tuple[str, str]:
    """The caller's entity prefix in ``scope`` and the cursors' listing."""
    grant = require_grant(identity, scope)
    return entity_prefix(scope, grant.entity_id), change_listing(scope, grant.entity_id)


def require_feed(storage: Storage) -> ChangeFeed:
    if not isinstance(storage, ChangeFeed):
        raise backend_unavailable_error(
            "unsupported", "this storage keeps no change feed"
        )
    return storage


def decode_change_cursor(key: bytes, listing: str, cursor: str | None) -> int:
    """The seq a cursor stands after (0: none given); one not issued for this
    feed is INVALID_ARGUMENT(cursor)."""
    if cursor is None:
        return 0
    position = decode_cursor(key, listing, cursor)
    if position is None or not position.isdigit() or len(position) > 18:
        raise invalid_argument_error(
            "cursor",
            "cursor was not issued by this scope's change feed; pass a change's "
            "cursor or next_cursor, or omit it to start from the oldest change kept",
        )
    return int(position)


def encode_change_cursor(key: bytes, listing: str, seq: int) -> str:
    return encode_cursor(key, listing, str(seq) if seq else _START)
