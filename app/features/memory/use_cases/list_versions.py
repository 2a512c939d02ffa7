from app.server.context import AppContext
from app.shared.errors import history_absent_error
from app.shared.identity import require_identity

from ..domain import encode_cursor
from ..domain.history import render_version, versions_listing
from ..policy import VERSIONS_CURSOR_HINT, locate_file, require_issued_cursor
from ..schemas import ListVersions, VersionListing


async def list_versions(request: ListVersions, context: AppContext) -> VersionListing:
    """One page of a file's version records, newest first; works after a delete.

    Read rules are read_file's; a file with no record at all is MEMORY_NOT_FOUND.
    """
    identity = require_identity(context.identity)
    address = locate_file(identity, request.scope, request.area, request.name)
    listing = versions_listing(address.key)
    after: str | None = None
    if request.cursor:
        after = require_issued_cursor(
            context.cursor_key, listing, request.cursor, hint=VERSIONS_CURSOR_HINT
        )
    size = context.limits.list_page_size
    page = await context.storage.list_versions(address.key, after=after, limit=size + 1)
    if not page and after is None:
        raise history_absent_error(address.location)
    shown = page[:size]
    next_cursor = None
    if len(page) > size:
        next_cursor = encode_cursor(context.cursor_key, listing, shown[-1].version)
    return VersionListing(
        entries=[render_version(record) for record in shown], next_cursor=next_cursor
    )
