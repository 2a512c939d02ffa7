"""search_memory: the files of the caller's grants that hold every word."""

from app.features.memory.domain import encode_cursor
from app.features.memory.policy.expiry import hidden_after
from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.hits import position_of, render_hits, search_listing
from ..domain.text import query_terms
from ..policy import require_limit, require_query, require_search_cursor, search_reach
from ..ports import SearchQuery
from ..schemas import SearchMemory, SearchResults


async def search_memory(request: SearchMemory, context: AppContext) -> SearchResults:
    """Files of the caller's grants that contain every word, best first."""
    identity = require_identity(context.identity)
    reach = search_reach(identity, request.scope, request.area)
    hide = hidden_after(identity, request.scope, request.include_expired, context.clock)
    query = require_query(request.query)
    limit = require_limit(request.limit)
    listing = search_listing(reach, query)
    after = require_search_cursor(context.cursor_key, listing, request.cursor, reach)
    terms = query_terms(query)
    page = await context.search_index.search(SearchQuery(reach, terms, after, limit))
    hits = render_hits(page.hits, terms, hide)
    next_cursor = None
    if page.more and page.hits:
        position = position_of(page.hits[-1][0], reach)
        next_cursor = encode_cursor(context.cursor_key, listing, position)
    return SearchResults(hits=hits, next_cursor=next_cursor)
