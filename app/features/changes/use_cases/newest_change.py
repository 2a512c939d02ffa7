"""newest_change: the cursor of the caller's newest change in one scope ("now")."""

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..policy import encode_change_cursor, feed_prefix, require_feed
from ..schemas import ReadChanges


async def newest_change(request: ReadChanges, context: AppContext) -> str:
    """A cursor after which only changes yet to land will follow."""
    identity = require_identity(context.identity)
    prefix, listing = feed_prefix(identity, request.scope)
    feed = require_feed(context.storage)
    page = await feed.changes_after(prefix, 1 << 62, now=context.clock(), limit=1)
    return encode_change_cursor(context.cursor_key, listing, page.last)
