"""A ranked file as a hit, and the position a search cursor carries."""

from collections.abc import Sequence

from app.features.memory.domain.expiry import Expiry
from app.features.memory.domain.timestamps import format_timestamp
from app.features.memory.domain.views import render_entry
from app.features.memory.ports import ListedObject
from app.features.search.schemas import SearchHit

from .corpus import SearchDocument
from .ranking import Ranked
from .snippets import snippet
from .text import Term


def render_hit(
    ranked: Ranked, document: SearchDocument, terms: Sequence[Term]
) -> SearchHit | None:
    meta = document.metadata
    shown = format_timestamp(meta.last_updated)
    listed = ListedObject(document.key, meta, document.version, shown)
    entry = render_entry(listed)
    if entry is None:
        return None
    snip = snippet(document.texts(), terms)
    row = entry.model_dump(exclude={"sources", "expires_at"})
    return SearchHit(**row, score=ranked.score, snippet=snip)


def render_hits(
    hits: Sequence[tuple[Ranked, SearchDocument]],
    terms: Sequence[Term],
    hide: Expiry | None,
) -> list[SearchHit]:
    """A page's hits, without the files ``hide`` finds expired."""
    rendered = (
        render_hit(ranked, document, terms)
        for ranked, document in hits
        if hide is None or not hide.expired(document.metadata)
    )
    return [hit for hit in rendered if hit is not None]


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
