"""read_markdown_archive: the caller's live files, as export_markdown writes them."""

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.domain import MemoryLimits
from app.features.memory.schemas import ExportMarkdown, ReadMarkdownArchive
from app.features.memory.use_cases.export_markdown import export_markdown
from app.features.memory.use_cases.read_markdown_archive import (
    read_markdown_archive,
)
from app.infra.memory.storage import MemoryStorage
from app.server.context import AppContext
from app.shared.errors import invalid_argument

from .conftest import START, create, make_context

LONG = "日" * 90  # 270 bytes: a valid name no file system can hold with ".md"


class SetClock:
    """A clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


async def archive(context: AppContext, scope: str | None = None) -> dict[str, bytes]:
    files = await read_markdown_archive(ReadMarkdownArchive(scope=scope), context)
    return {file.path: file.data async for file in files}


def tree_of(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


async def seeded(clock: SetClock) -> AppContext:
    """Alice's files in two scopes, one of them expired and one unnameable."""
    limits = MemoryLimits(area_ttl={"scratch": 60})
    context = make_context(storage=MemoryStorage(), clock=clock, limits=limits)
    await create(context, "- [stated] Green.\n", description="Tea", aliases=["t"])
    await create(context, "- [stated] Soon gone.\n", area="scratch", name="gone")
    await create(context, "- [stated] Far.\n", name=LONG)
    await create(context, "- [stated] Plan.\n", scope="team", name="plan")
    await create(context, "- [stated] Last.\n", area="work", name="zz")
    clock.now = START + timedelta(seconds=61)
    return context


async def test_the_archive_holds_the_live_files_of_every_granted_scope(
    tmp_path: Path,
) -> None:
    """Each file's bytes are export_markdown's; expired, unnameable ones left out."""
    context = await seeded(SetClock())
    for scope, entity in (("user", "alice"), ("team", "t-1")):
        request = ExportMarkdown(scope=scope, entity_id=entity, path=str(tmp_path))
        await export_markdown(request, context)

    files = await archive(context)

    exported = tree_of(tmp_path)
    assert "user/scratch/gone.md" in exported  # the operator's export keeps it
    del exported["user/scratch/gone.md"]
    assert files == exported
    assert sorted(files) == [
        "team/notes/plan.md",
        "user/notes/tea.md",
        "user/work/zz.md",
    ]
    assert b"description: Tea" in files["user/notes/tea.md"]
    assert files["user/notes/tea.md"].endswith(b"- [stated] Green.\n")


async def test_the_archive_of_one_scope_holds_only_that_scope() -> None:
    context = await seeded(SetClock())

    assert sorted(await archive(context, "team")) == ["team/notes/plan.md"]
    assert sorted(await archive(context, "user")) == [
        "user/notes/tea.md",
        "user/work/zz.md",
    ]


async def test_the_archive_carries_each_file_s_last_update() -> None:
    context = await seeded(SetClock())

    files = await read_markdown_archive(ReadMarkdownArchive(scope="user"), context)
    updates = [file.last_updated async for file in files]

    assert updates == [START, START]


async def test_an_ungranted_scope_is_refused() -> None:
    context = make_context(grants=("user=alice:owner",))

    with pytest.raises(AppError) as raised:
        await read_markdown_archive(ReadMarkdownArchive(scope="team"), context)

    assert raised.value.definition is invalid_argument
