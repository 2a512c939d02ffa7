"""Search arguments: what a query may be, how many hits, and which files it reaches."""

from app.features.memory.domain import entity_prefix
from app.features.memory.policy import require_area, require_grant, require_text
from app.shared.errors import invalid_argument_error
from app.shared.identity import Identity

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
