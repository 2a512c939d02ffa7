"""Pages of files and of versions: one item looked ahead, a cursor after the last."""

from collections.abc import Sequence

from app.features.memory import ports
from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import ListPrefix, ListVersions
from app.features.memory.use_cases.list_prefix import list_prefix
from app.features.memory.use_cases.list_versions import list_versions
from app.infra.memory.storage import MemoryStorage

from .conftest import LOCATION, create, five_versions, make_context


class LimitRecordingStorage(MemoryStorage):
    """Memory storage that notes each listing's limit."""

    def __init__(self) -> None:
        super().__init__()
        self.limits: list[int] = []
        self.starts: list[str | None] = []

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ports.ListedObject]:
        self.limits.append(limit)
        self.starts.append(start_after)
        return await super().list_page(prefix, start_after=start_after, limit=limit)

    async def list_versions(
        self, key: str, *, after: str | None, limit: int
    ) -> Sequence[ports.VersionRecord]:
        self.limits.append(limit)
        return await super().list_versions(key, after=after, limit=limit)


async def test_a_page_of_three_goes_on_after_its_third_record() -> None:
    storage = LimitRecordingStorage()
    context = make_context(storage=storage, limits=MemoryLimits(list_page_size=3))
    newest_first = await five_versions(context)

    first = await list_versions(ListVersions(**LOCATION), context)
    assert first.next_cursor is not None
    second = await list_versions(
        ListVersions(**LOCATION, cursor=first.next_cursor), context
    )

    assert [e.version for e in first.entries] == newest_first[:3]
    assert [e.version for e in second.entries] == newest_first[3:]
    assert second.next_cursor is None
    assert storage.limits == [4, 4]


async def test_a_page_of_files_asks_storage_for_one_file_past_it() -> None:
    storage = LimitRecordingStorage()
    context = make_context(storage=storage, limits=MemoryLimits(list_page_size=2))
    for name in ("a", "b", "c"):
        await create(context, name=name)

    first = await list_prefix(ListPrefix(scope="user"), context)
    assert first.next_cursor is not None
    second = await list_prefix(
        ListPrefix(scope="user", cursor=first.next_cursor), context
    )

    assert [len(first.entries), len(second.entries)] == [2, 1]
    assert second.next_cursor is None
    assert storage.limits == [3, 3]
    assert storage.starts[0] is None  # a first page starts nowhere, not at ""
