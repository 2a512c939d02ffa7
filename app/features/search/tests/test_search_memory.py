"""search_memory over in-memory storage: reach, expiry and pages."""

from datetime import datetime, timedelta

import pytest
from tenchi.errors import AppError

from app.features.memory.schemas import WriteFile
from app.features.memory.tests.conftest import START, as_identity, create, make_context
from app.features.memory.use_cases.write_file import write_file
from app.features.search.schemas import SearchMemory
from app.features.search.use_cases.search_memory import search_memory
from app.server.context import AppContext


class StoppedClock:
    """A clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


async def names(context: AppContext, query: str, **narrowing: object) -> list[str]:
    request = SearchMemory.model_validate({"query": query, **narrowing})
    return [
        f"{h.scope}/{h.area}/{h.name}"
        for h in (await search_memory(request, context)).hits
    ]


async def test_only_files_of_the_callers_grants_are_found() -> None:
    context = make_context()
    await create(context, "oolong", name="mine")
    await create(context, "oolong", scope="team", area="shared", name="ours")
    await create(as_identity(context, "user=bob:owner"), "oolong", name="bobs")

    assert await names(context, "oolong") == ["team/shared/ours", "user/notes/mine"]
    assert await names(context, "oolong", scope="user") == ["user/notes/mine"]
    assert await names(context, "oolong", scope="team", area="notes") == []


async def test_expired_files_are_found_only_when_an_owner_asks_for_them() -> None:
    clock = StoppedClock()
    context = make_context(clock=clock)
    await create(context, "oolong", name="kept")
    expiring = WriteFile(
        scope="user",
        area="notes",
        name="brief",
        content="oolong",
        description="",
        aliases=[],
        ttl_seconds=60,
        expected_version=None,
    )
    await write_file(expiring, context)
    assert await names(context, "oolong") == ["user/notes/brief", "user/notes/kept"]

    clock.now = START + timedelta(seconds=60)

    assert await names(context, "oolong") == ["user/notes/kept"]
    assert await names(context, "oolong", scope="user", include_expired=True) == [
        "user/notes/brief",
        "user/notes/kept",
    ]
    with pytest.raises(AppError) as refused:
        await names(context, "oolong", include_expired=True)
    assert refused.value.code == "RESTRICTED_SCOPE"


async def test_pages_follow_each_other_to_the_last_hit() -> None:
    context = make_context()
    for name, content in [("a", "tea"), ("b", "tea tea"), ("c", "tea"), ("d", "x")]:
        await create(context, content, name=name)
    everything = await names(context, "tea", limit=50)

    seen: list[str] = []
    cursor = None
    for _ in everything:
        request = SearchMemory(query="tea", limit=1, cursor=cursor)
        page = await search_memory(request, context)
        seen += [f"{h.scope}/{h.area}/{h.name}" for h in page.hits]
        cursor = page.next_cursor
        if cursor is None:
            break

    assert len(everything) == 3
    assert seen == everything
    assert cursor is None


async def test_a_cursor_continues_only_the_search_it_was_issued_for() -> None:
    context = make_context()
    for name in ("a", "b"):
        await create(context, "green tea", name=name)
    first = await search_memory(SearchMemory(query="tea", limit=1), context)
    assert first.next_cursor is not None

    for other in (
        SearchMemory(query="green", limit=1, cursor=first.next_cursor),
        SearchMemory(query="tea", scope="user", limit=1, cursor=first.next_cursor),
    ):
        with pytest.raises(AppError) as refused:
            await search_memory(other, context)
        assert refused.value.details["argument"] == "cursor"
