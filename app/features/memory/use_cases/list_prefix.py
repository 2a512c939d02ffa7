from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain import encode_cursor, render_entries
from ..policy import locate_prefix, require_issued_cursor
from ..policy.expiry import hidden_after
from ..schemas import FileListing, ListPrefix


async def list_prefix(request: ListPrefix, context: AppContext) -> FileListing:
    """One page of a scope or area, ascending by key, expired files left out
    (owners may ask for them); an empty cursor means none."""
    identity = require_identity(context.identity)
    prefix = locate_prefix(identity, request.scope, request.area)
    hide = hidden_after(identity, request.scope, request.include_expired, context.clock)
    start_after: str | None = None
    if request.cursor:
        position = require_issued_cursor(context.cursor_key, prefix, request.cursor)
        start_after = prefix + position
    size = context.limits.list_page_size
    page = await context.storage.list_page(
        prefix, start_after=start_after, limit=size + 1
    )
    shown = page[:size]
    entries = render_entries(shown, hide)
    next_cursor = None
    if len(page) > size:
        next_cursor = encode_cursor(
            context.cursor_key, prefix, shown[-1].key[len(prefix) :]
        )
    return FileListing(entries=entries, next_cursor=next_cursor)
