"""What searching needs of a backend: a ranked page of the files in reach."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .domain.corpus import SearchDocument
from .domain.ranking import Ranked
from .domain.text import Term


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: Sequence[tuple[Ranked, SearchDocument]]
    more: bool
    """Whether ranked hits follow the last one of this page."""


class SearchIndex(Protocol):
    """Ranks files under key prefixes; the same data gives the same page anywhere."""

    async def search(
        self,
        reach: Sequence[str],
        terms: Sequence[Term],
        *,
        after: Ranked | None,
        limit: int,
    ) -> SearchPage:
        """Up to ``limit`` hits ranked strictly after ``after`` (None: from the top).

        ``reach`` holds key prefixes (an entity, or an entity's area); the
        ranking statistics cover exactly the files under them. No terms: no hits.
        """
        ...
