"""How the listing tests page through a scope."""

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import FileListing, ListPrefix
from app.features.memory.use_cases.list_prefix import list_prefix
from app.server.context import AppContext

from .conftest import (
    make_context,
)


def paths(listing: FileListing) -> list[str]:
    return [f"{entry.area}/{entry.name}" for entry in listing.entries]


async def list_all(context: AppContext, area: str | None = None) -> list[str]:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = await list_prefix(
            ListPrefix(scope="user", area=area, cursor=cursor), context
        )
        seen += paths(page)
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


def paged_context(size: int = 2) -> AppContext:
    return make_context(limits=MemoryLimits(list_page_size=size))
