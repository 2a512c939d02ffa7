"""search_memory: the files of the caller's grants that hold every word."""

from app.features.memory.domain import decode_cursor, encode_cursor
from app.features.search.domain.hits import (
    position_of,
    ranked_at,
    render_hit,
    search_listing,
)
from app.features.search.domain.ranking import Ranked
from app.features.search.domain.text import query_terms
from app.features.search.policy import require_limit, require_query, search_reach
from app.features.search.ports import SearchQuery
from app.server.context import AppContext
from app.shared.errors import invalid_argument_error
from app.shared.identity import require_identity

from ..schemas import SearchMemory, SearchResults


async def search_memory(request: SearchMemory, context: AppContext) -> SearchResults:
    """Files of the caller's grants that contain every word, best first."""
    identity = require_identity(context.identity)
    reach = search_reach(identity, request.scope, request.area)
    query = require_query(request.query)
    limit = require_limit(request.limit)
    listing = search_listing(reach, query)
    after = _after(context, listing, request.cursor, reach)
    terms = query_terms(query)
    page = await context.search_index.search(SearchQuery(reach, terms, after, limit))
    rendered = (render_hit(ranked, doc, terms) for ranked, doc in page.hits)
    hits = [hit for hit in rendered if hit is not None]
    next_cursor = None
    if page.more and page.hits:
        position = position_of(page.hits[-1][0], reach)
        next_cursor = encode_cursor(context.cursor_key, listing, position)
    return SearchResults(hits=hits, next_cursor=next_cursor)


def _after(
    context: AppContext, listing: str, cursor: str | None, reach: list[str]
) -> Ranked | None:
    if not cursor:
        return None
    position = decode_cursor(context.cursor_key, listing, cursor)
    after = None if position is None else ranked_at(position, reach)
    if after is None:
        raise invalid_argument_error(
            "cursor",
            "cursor was not issued for this search; pass the next_cursor returned "
            "with the same query, scope and area, or omit it to start over",
        )
    return after
