"""The order the router tries routes in: the hot reads first, routing unchanged.

Starlette tries routes one regex at a time, and Tenchi orders them most
specific first, so a file read was the twelfth route tried and the index the
eighth. The routes of the hot paths move to the front, together and in their
own order; no other route can match a URL one of them matches (each other path
differs in a literal segment or in its number of segments), so every request
reaches the same route as before, and a wrong method still gets the same 405.
"""

from collections.abc import Sequence

from starlette.routing import BaseRoute

HOT_PATHS = (
    "/v1/files/{scope}/{area}/{name}",
    "/v1/index",
    "/v1/files/{scope}/{area}/{name}/replace",
    "/v1/files/{scope}/{area}/{name}/lines",
    "/mcp",
)
"""Read-heavy paths, the most requested first, then the two edits (a fact
replaced, a line appended: tried seventh and ninth before); then MCP's one
endpoint, which was tried after every /v1 route."""


def _rank(route: BaseRoute) -> int:
    path = getattr(route, "path", None)
    return HOT_PATHS.index(path) if path in HOT_PATHS else len(HOT_PATHS)


def hot_first(routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """``routes`` with the routes of ``HOT_PATHS`` first (a stable reorder)."""
    return sorted(routes, key=_rank)
