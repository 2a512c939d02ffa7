"""What a search takes and answers: the query, its narrowing, a page of hits."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.features.memory.schemas import Cursor, OneLine, Segment, Strict
from app.features.memory.schemas.fields import INCLUDE_EXPIRED

SEARCH_LIMIT_DEFAULT = 10
QUERY_DESCRIPTION = (
    "Words to find, as plain text (1-256 characters); every word must occur, "
    "the last may be the start of a word."
)
SEARCH_SCOPE = "Only this scope; omit to search every scope of this session."
SEARCH_AREA = "Only this area of the scope; needs scope."
SEARCH_LIMIT = "Hits per page, 1-50 (default 10)."
SEARCH_CURSOR = "next_cursor of the previous page of the same search."


class SearchMemory(Strict):
    query: Annotated[OneLine, Field(description=QUERY_DESCRIPTION)]
    scope: Segment | None = Field(default=None, description=SEARCH_SCOPE)
    area: Segment | None = Field(default=None, description=SEARCH_AREA)
    limit: int = Field(default=SEARCH_LIMIT_DEFAULT, description=SEARCH_LIMIT)
    cursor: Cursor | None = Field(default=None, description=SEARCH_CURSOR)
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED)


class SearchQuery(SearchMemory):
    """``GET /v1/search``: the query travels as ``q``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: OneLine = Field(alias="q", description=QUERY_DESCRIPTION)


class SearchHit(BaseModel):
    scope: str
    area: str
    name: str
    description: str
    aliases: list[str]
    version: str
    last_updated: str
    score: float
    snippet: str
    """Up to 240 characters of the best-matching field, matches in ``**``."""


class SearchResults(BaseModel):
    hits: list[SearchHit]
    next_cursor: str | None
