"""Search arguments: what a query may be, how many hits, and which files it reaches."""

from app.features.memory.domain import decode_cursor, entity_prefix
from app.features.memory.policy import require_area, require_grant, require_text
from app.shared.errors import invalid_argument_error
from app.shared.identity import Identity

from .domain.hits import ranked_at
from .domain.ranking import Ranked

MAX_QUERY_CHARS = 256
MAX_LIMIT = 50


def search_reach(identity: Identity, scope: str | None, area: str | None) -> list[str]:
    """The key prefixes searched: every grant, or one scope, or one of its areas."""
    if scope is None:
        if area is not None:
            raise invalid_argument_error(
                "area", "area narrows a scope; pass scope too, or omit area"
            )
        return [
            entity_prefix(name, grant.entity_id)
            for name, grant in sorted(identity.grants.items())
        ]
    grant = require_grant(identity, scope)
    prefix = entity_prefix(scope, grant.entity_id)
    return [prefix if area is None else f"{prefix}{require_area(area)}/"]


def require_query(query: str) -> str:
    """Any text is a query, searched as written; blank or over 256 characters is not."""
    require_text("query", query)
    if not query.strip():
        raise invalid_argument_error("query", "query is blank; pass words to find")
    if len(query) > MAX_QUERY_CHARS:
        raise invalid_argument_error(
            "query",
            f"query has {len(query)} characters, over the {MAX_QUERY_CHARS}-character "
            "limit; search for fewer words",
        )
    return query


def require_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid_argument_error(
            "limit", f"limit must be between 1 and {MAX_LIMIT}; got {limit}"
        )
    return limit


def require_search_cursor(
    key: bytes, listing: str, cursor: str | None, reach: list[str]
) -> Ranked | None:
    """Where the page after ``cursor`` starts (None: the top); a cursor issued
    for another query, scope or area is INVALID_ARGUMENT."""
    if not cursor:
        return None
    position = decode_cursor(key, listing, cursor)
    after = None if position is None else ranked_at(position, reach)
    if after is None:
        raise invalid_argument_error(
            "cursor",
            "cursor was not issued for this search; pass the next_cursor returned "
            "with the same query, scope and area, or omit it to start over",
        )
    return after
