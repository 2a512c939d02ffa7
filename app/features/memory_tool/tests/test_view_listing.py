"""The tool's view of a directory: every page of a long listing, a file directly
under /memories named like an area, and a file deleted between the listing and
its read; and the reference's line limit of a file's view."""

from collections.abc import Awaitable, Callable, Sequence

import pytest

from app.features.memory.domain.limits import MemoryLimits
from app.features.memory.ports import ListedObject
from app.features.memory.schemas import DeleteFile, ReadFile
from app.features.memory.tests.conftest import create, make_context
from app.features.memory.use_cases.delete_file import delete_file
from app.features.memory.use_cases.read_file import read_file
from app.features.memory_tool.domain.paths import ROOT_AREA, ToolRefusal
from app.features.memory_tool.domain.texts import MAX_LINES, file_view
from app.features.memory_tool.schemas import RunMemoryCommand
from app.features.memory_tool.use_cases.run_memory_command import run_memory_command
from app.infra.memory.storage import MemoryStorage

HEADER = (
    "Here're the files and directories up to 2 levels deep in {}, "
    "excluding hidden items:"
)
LINE = "- [stated] x\n"
"""13 bytes."""


class ListedStorage(MemoryStorage):
    """Storage that runs ``after_listing`` (another agent's call) once, right after
    its next listing, and refuses a page asked for twice: a reader that does so
    would list for ever."""

    def __init__(self) -> None:
        super().__init__()
        self.after_listing: Callable[[], Awaitable[object]] | None = None
        self.asked: list[tuple[str, str | None]] = []

    async def list_page(
        self, prefix: str, *, start_after: str | None, limit: int
    ) -> Sequence[ListedObject]:
        if (prefix, start_after) in self.asked:
            raise AssertionError(f"{prefix} after {start_after} listed twice")
        self.asked.append((prefix, start_after))
        page = await super().list_page(prefix, start_after=start_after, limit=limit)
        if self.after_listing is not None:
            run, self.after_listing = self.after_listing, None
            await run()
        return page


def view(path: str) -> RunMemoryCommand:
    return RunMemoryCommand(scope="user", command="view", path=path)


async def test_a_listing_longer_than_a_page_is_shown_whole() -> None:
    storage = ListedStorage()
    context = make_context(storage=storage, limits=MemoryLimits(list_page_size=2))
    names = ["a.md", "b.md", "c.md", "d.md", "e.md"]
    for name in names:
        await create(context, LINE, area="prefs", name=name)

    area = await run_memory_command(view("/memories/prefs"), context)
    root = await run_memory_command(view("/memories"), context)

    files = [f"13B\t/memories/prefs/{name}" for name in names]
    assert area.result == "\n".join(
        [HEADER.format("/memories/prefs"), "4K\t/memories/prefs", *files]
    )
    assert root.result == "\n".join(
        [HEADER.format("/memories"), "4K\t/memories", "4K\t/memories/prefs/", *files]
    )
    assert len(storage.asked) == 6  # three pages each


async def test_a_file_named_like_an_area_is_shown_before_it() -> None:
    context = make_context()
    await create(context, "- [stated] top\n", area=ROOT_AREA, name="prefs")
    await create(context, LINE, area="prefs", name="a.md")

    answer = await run_memory_command(view("/memories"), context)

    assert answer.result == "\n".join(
        [
            HEADER.format("/memories"),
            "4K\t/memories",
            "15B\t/memories/prefs",
            "4K\t/memories/prefs/",
            "13B\t/memories/prefs/a.md",
        ]
    )


async def test_a_file_deleted_after_the_listing_is_shown_empty() -> None:
    storage = ListedStorage()
    context = make_context(storage=storage)
    await create(context, LINE, area="prefs", name="a.md")
    await create(context, LINE + LINE, area="prefs", name="b.md")
    read = ReadFile(scope="user", area="prefs", name="a.md")
    version = (await read_file(read, context)).version

    async def delete() -> None:
        request = DeleteFile(
            scope="user", area="prefs", name="a.md", expected_version=version
        )
        await delete_file(request, context)

    storage.after_listing = delete
    answer = await run_memory_command(view("/memories/prefs"), context)

    assert answer.result == "\n".join(
        [
            HEADER.format("/memories/prefs"),
            "4K\t/memories/prefs",
            "0B\t/memories/prefs/a.md",
            "26B\t/memories/prefs/b.md",
        ]
    )
    assert storage.after_listing is None


def test_a_file_view_holds_at_most_the_reference_line_limit() -> None:
    longest = file_view("/memories/a.md", "\n" * (MAX_LINES - 1), None)
    assert longest.count("\n") == MAX_LINES  # the header's, then one per line

    with pytest.raises(ToolRefusal) as refused:
        file_view("/memories/a.md", "\n" * MAX_LINES, None)
    assert refused.value.text == (
        "File /memories/a.md exceeds maximum line limit of 999,999 lines."
    )
