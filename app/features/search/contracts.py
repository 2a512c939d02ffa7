"""The search feature's HTTP contract."""

from tenchi.contracts import contract

from app.features.memory.contracts import TAGS
from app.shared.errors import invalid_argument, restricted_scope

from .schemas import SearchQuery, SearchResults

search_memory_contract = contract(
    method="GET",
    path="/search",
    query=SearchQuery,
    response=SearchResults,
    errors=(invalid_argument, restricted_scope),
    name="search_memory",
    summary="Files of every granted scope that contain all the query's words.",
    tags=TAGS,
)
