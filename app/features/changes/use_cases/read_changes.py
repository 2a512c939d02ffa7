"""read_changes: the caller's changes in one scope after a cursor, oldest first."""

from functools import partial

from app.server.context import AppContext
from app.shared.errors import cursor_expired_error
from app.shared.identity import require_identity

from ..domain import follows, page_end, render_change
from ..policy import (
    decode_change_cursor,
    encode_change_cursor,
    feed_prefix,
    require_feed,
)
from ..schemas import CHANGES_PAGE, ChangesPage, ReadChanges


async def read_changes(request: ReadChanges, context: AppContext) -> ChangesPage:
    """Up to a page of changes after ``after``; CURSOR_EXPIRED when some are gone."""
    identity = require_identity(context.identity)
    prefix, listing = feed_prefix(identity, request.scope)
    after = decode_change_cursor(context.cursor_key, listing, request.after)
    feed = require_feed(context.storage)
    page = await feed.changes_after(
        prefix, after, now=context.clock(), limit=CHANGES_PAGE
    )
    if not follows(page, after):
        raise cursor_expired_error(request.scope)
    cursor = partial(encode_change_cursor, context.cursor_key, listing)
    changes = [render_change(entry, cursor) for entry in page.changes]
    return ChangesPage(changes=changes, next_cursor=cursor(page_end(page, after)))
