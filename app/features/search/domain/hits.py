"""A ranked file as a hit, and the position a search cursor carries."""

from collections.abc import Sequence

from app.features.memory.domain import format_timestamp, split_key
from app.features.memory.schemas import SearchHit

from .corpus import SearchDocument
from .ranking import Ranked
from .snippets import snippet
from .text import Term


def render_hit(
    ranked: Ranked, document: SearchDocument, terms: Sequence[Term]
) -> SearchHit | None:
    parts = split_key(document.key)
    if parts is None:
        return None
    meta = document.metadata
    return SearchHit(
        scope=parts[0],
        area=parts[1],
        name=parts[2],
        description=meta.description,
        aliases=list(meta.aliases),
        version=document.version,
        last_updated=format_timestamp(meta.last_updated),
        score=ranked.score,
        snippet=snippet(document.texts(), terms),
    )


def search_listing(reach: Sequence[str], query: str) -> str:
    """What a cursor is bound to: the caller's searched prefixes and the query."""
    return "search\0" + "\0".join(reach) + "\0\0" + query


def position_of(ranked: Ranked, reach: Sequence[str]) -> str:
    """The last hit of a page, relative to its prefix: no entity id inside."""
    for number, prefix in enumerate(reach):
        if ranked.key.startswith(prefix):
            return f"{ranked.score.hex()}\n{number}\n{ranked.key[len(prefix) :]}"
    raise ValueError("a hit outside the searched prefixes")


def ranked_at(position: str, reach: Sequence[str]) -> Ranked | None:
    """The hit a position names, or None when it does not parse."""
    score, _, rest = position.partition("\n")
    number, _, relative = rest.partition("\n")
    try:
        return Ranked(reach[int(number)] + relative, float.fromhex(score))
    except (ValueError, IndexError):
        return None
