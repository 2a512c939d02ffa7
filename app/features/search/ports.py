"""What searching needs of a backend: a ranked page of the files in reach."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .domain.corpus import SearchDocument
from .domain.ranking import Ranked
from .domain.text import Term


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """Files under any prefix of ``reach`` holding every term, ranked after ``after``.

    ``reach`` holds key prefixes (an entity, or an entity's area); ``after``
    None starts from the top, and a page holds at most ``limit`` hits.
    """

    reach: Sequence[str]
    terms: Sequence[Term]
    after: Ranked | None
    limit: int


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: Sequence[tuple[Ranked, SearchDocument]]
    more: bool
    """Whether ranked hits follow the last one of this page."""


class SearchIndex(Protocol):
    """Ranks files under key prefixes; the same data gives the same page anywhere."""

    async def search(self, query: SearchQuery) -> SearchPage:
        """The page ``query`` asks for; ``more`` says whether ranked hits follow.

        The ranking statistics cover exactly the files in the query's reach.
        No terms: no hits.
        """
        ...
